// Every model of ONNX's own conformance suite (libonnx-testdata) loads:
// 900+ single-operator models covering every operator, type and attribute
// form, plus the pytorch-converted and simple models. Their nodes all pass
// the checks the runtime, the passes and the code generators make first.
#include "core/analysis/cost_model.h"
#include "core/analysis/metrics.h"
#include "core/onnx/node_checks.h"
#include "core/onnx/onnx_import.h"
#include "core/util/error.h"
#include "test_support.h"

#include <QDirIterator>
#include <QtTest>

using namespace ramiel;

class TestConformanceImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void allModelsLoad_data()
    {
        QTest::addColumn<QString>("group");
        for (const char* g : {"node", "pytorch-converted", "pytorch-operator", "simple"})
            QTest::newRow(g) << QString(g);
    }

    void allModelsLoad()
    {
        QFETCH(QString, group);
        const QString root = test::conformanceDataDir() + "/" + group;
        if (!QDir(root).exists())
            QFAIL("libonnx-testdata is missing: apt-get install libonnx-testdata");
        int loaded = 0;
        QStringList failures;
        QDirIterator it(root, {"model.onnx"}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            try {
                const Model m = loadOnnx(path.toStdString());
                validateNodes(m);
                const Topology t = buildTopology(m.graph);
                const auto costs = estimateCosts(m.graph);
                computeMetrics(m.graph, t, costs, costSeconds(costs, MachineConstants{}));
                ++loaded;
            } catch (const Error& e) {
                failures << e.what();
            }
        }
        qInfo("%s: %d models loaded, %d refused", qPrintable(group), loaded, int(failures.size()));
        QVERIFY2(failures.isEmpty(), qPrintable(failures.join('\n')));
        QVERIFY(loaded > 0);
    }
};

QTEST_GUILESS_MAIN(TestConformanceImport)
#include "tst_conformance_import.moc"
