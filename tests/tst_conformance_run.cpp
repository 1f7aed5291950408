// ONNX's own conformance node tests (libonnx-testdata) for every operator the
// runtime claims: run the model on the stored inputs, compare with the stored
// outputs. A test that cannot pass is listed with its reason in
// tests/data/conformance_skips.txt.
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "test_support.h"

#include <QFile>
#include <QRegularExpression>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace ramiel;

namespace {

// Empty when equal within rtol/atol (floats) or exactly (others).
QString compare(const Tensor& got, const Tensor& want, double rtol, double atol)
{
    if (got.dims != want.dims)
        return QString("shape %1, expected %2").arg(QString::fromStdString(got.shape().toString()),
                                                      QString::fromStdString(want.shape().toString()));
    if (got.dtype != want.dtype)
        return QString("type %1, expected %2").arg(QString::fromStdString(dataTypeName(got.dtype)),
                                                     QString::fromStdString(dataTypeName(want.dtype)));
    const auto a = got.toDoubles(), b = want.toDoubles();
    if (!a || !b)
        return got.data == want.data ? QString() : QString("raw data differs");
    const bool exact = got.dtype != DataType::Float && got.dtype != DataType::Double;
    for (size_t i = 0; i < a->size(); ++i) {
        const double x = (*a)[i], y = (*b)[i];
        if (std::isnan(x) && std::isnan(y))
            continue;
        if (std::isinf(x) || std::isinf(y)) {
            if (x != y)
                return QString("element %1: %2, expected %3").arg(i).arg(x).arg(y);
            continue;
        }
        const bool ok = exact ? x == y : std::abs(x - y) <= atol + rtol * std::abs(y);
        if (!ok)
            return QString("element %1: %2, expected %3").arg(i).arg(x, 0, 'g', 9).arg(y, 0, 'g', 9);
    }
    return {};
}

}  // namespace

class TestConformanceRun : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void claimedOperatorsPass()
    {
        if (!QDir(test::conformanceDataDir() + "/node").exists())
            QFAIL("libonnx-testdata is missing: apt-get install libonnx-testdata");
        const auto skips = test::readReasonList(test::sourcePath("tests/data/conformance_skips.txt"));
        int passed = 0, skipped = 0;
        QStringList failures;
        std::set<QString> unusedSkips;
        for (const auto& [name, reason] : skips)
            unusedSkips.insert(name);
        for (const auto& [name, dir, model] : test::claimedConformanceTests(failures)) {
            unusedSkips.erase(name);
            if (skips.count(name)) {
                ++skipped;
                continue;
            }
            QString problem;
            try {
                const auto compiled = runtime().compile(model);
                std::vector<Tensor> inputs;
                for (const QString& pb : test::conformanceData(dir, "input"))
                    inputs.push_back(readTensorProto(pb.toStdString()));
                // Optional inputs the test leaves out are graph inputs without a file.
                compiled->setInputs(inputs);
                compiled->serialExecutor(1)->run();
                const auto outputs = compiled->outputs();
                const QStringList stored = test::conformanceData(dir, "output");
                if (stored.size() > int(outputs.size()))
                    problem = QString("%1 outputs, expected %2").arg(outputs.size()).arg(stored.size());
                for (int i = 0; i < std::min(int(outputs.size()), int(stored.size())) && problem.isEmpty(); ++i) {
                    const QString diff = compare(outputs[i], readTensorProto(stored[i].toStdString()), 1e-3, 1e-5);
                    if (!diff.isEmpty())
                        problem = QString("output %1: %2").arg(i).arg(diff);
                }
            } catch (const std::exception& e) {
                problem = e.what();
            }
            if (problem.isEmpty())
                ++passed;
            else
                failures << name + ": " + problem;
        }
        // The plain closing line counted by CI, then the details.
        qInfo("conformance: %d passed, %d failed, %d skipped", passed, int(failures.size()), skipped);
        for (const QString& f : failures)
            qWarning("%s", qPrintable(f));
        for (const QString& s : unusedSkips)
            qWarning("skip entry %s matches no test of a claimed operator", qPrintable(s));
        QVERIFY2(failures.isEmpty(), qPrintable(QString("%1 conformance tests failed").arg(failures.size())));
        QVERIFY(passed > 300);

        // The figures the README and docs/runtime.md give are these, and the docs list every operator.
        const auto ops = runtime().supportedOperators();
        const QString readme = test::readText(test::sourcePath("README.md"));
        const QRegularExpression claim("runtime: (\\d+) ONNX operators \\((\\d+) of ONNX's conformance tests pass\\)");
        const auto m = claim.match(readme);
        QVERIFY2(m.hasMatch(), "README.md lacks 'runtime: N ONNX operators (P of ONNX's conformance tests pass)'");
        QCOMPARE(m.captured(1).toInt(), int(ops.size()));
        QCOMPARE(m.captured(2).toInt(), passed);
        const QString doc = test::readText(test::sourcePath("docs/runtime.md"));
        const auto d = QRegularExpression("claimed: (\\d+) pass, 0 fail, (\\d+) are skipped").match(doc);
        QVERIFY2(d.hasMatch(), "docs/runtime.md lacks 'claimed: P pass, 0 fail, S are skipped'");
        QCOMPARE(d.captured(1).toInt(), passed);
        QCOMPARE(d.captured(2).toInt(), skipped);
        const int list = doc.indexOf("Operators: ");
        QVERIFY(list >= 0);
        const QString listed = doc.mid(list, doc.indexOf("(`ramiel::runtime().supportedOperators()`", list) - list);
        for (const std::string& op : ops)
            QVERIFY2(QRegularExpression("\\b" + QString::fromStdString(op) + "\\b").match(listed).hasMatch(),
                     qPrintable("docs/runtime.md does not list " + QString::fromStdString(op)));
    }
};

QTEST_GUILESS_MAIN(TestConformanceRun)
#include "tst_conformance_run.moc"
