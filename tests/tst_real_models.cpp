// Real models beyond classification, exported at test time by
// tests/models/export_real_models.py: torchvision's Faster R-CNN detector
// (If, NonZero, TopK, RoiAlign, NonMaxSuppression, shapes known only at run time)
// an LR-ASPP segmentation model and two models of PyTorch's recurrent layers, run
// serially and on a 2-worker parallel schedule against PyTorch's outputs (and ONNX
// Runtime's where installed); swin_t on the parallel schedule against PyTorch's
// output too.
#include "core/analysis/cost_model.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/schedule/cost_table.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "test_support.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace ramiel;
using test::detectionDifference;

namespace {

constexpr double kTolerance = 1e-4;
const char* const kDetector = "fasterrcnn_mobilenet_v3_large_320_fpn";

QString realModelsDir() { return test::modelsDir() + "/../real_models"; }


// Every output of `model` on `inputNpy` in ONNX Runtime, typed as Ramiel's outputs `like`.
std::vector<Tensor> runInOrt(const QString& modules, const QString& model, const QString& inputNpy,
                             const std::vector<Tensor>& like, const std::vector<std::string>& names)
{
    QTemporaryDir dir;
    QProcess ort;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("NODE_PATH", modules);
    ort.setProcessEnvironment(env);
    ort.start("node", {test::sourcePath("tests/support/ort_run.js"), model, inputNpy, dir.path(), "--all"});
    if (!ort.waitForFinished(300000) || ort.exitCode() != 0)
        throw Error(ErrorKind::Runtime, {}, "ONNX Runtime failed: " + ort.readAllStandardError().toStdString());
    std::vector<Tensor> out;
    for (size_t i = 0; i < names.size(); ++i) {
        QFile data(dir.filePath(QString::fromStdString(names[i]) + ".raw"));
        QFile shape(dir.filePath(QString::fromStdString(names[i]) + ".shape"));
        if (!data.open(QIODevice::ReadOnly) || !shape.open(QIODevice::ReadOnly))
            throw Error(ErrorKind::Runtime, {}, "no output '" + names[i] + "' from ONNX Runtime");
        Tensor t;
        t.dtype = like[i].dtype;
        for (const QByteArray& d : shape.readAll().split(','))
            if (!d.isEmpty())
                t.dims.push_back(d.toLongLong());
        t.data = data.readAll().toStdString();
        out.push_back(t);
    }
    return out;
}

struct Runs {
    Model model;
    std::unique_ptr<CompiledModel> compiled;

    explicit Runs(const QString& path) : model(loadOnnx(path.toStdString())), compiled(runtime().compile(model)) {}

    std::vector<Tensor> serial(const std::vector<Tensor>& inputs, int threads = 1)
    {
        compiled->setInputs(inputs);
        compiled->serialExecutor(threads)->run();
        return compiled->outputs();
    }

    // A 2-worker schedule on the static costs (the control-flow and data-sized nodes
    // count as their dispatch only): the first scheduler that uses both workers.
    std::vector<Tensor> parallel(const std::vector<Tensor>& inputs)
    {
        const Topology topo = buildTopology(model.graph);
        const CostTable costs =
            CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{}, EdgeCostParameters{});
        Plan plan;
        std::string tried;
        for (const SchedulerInfo& s : schedulers()) {
            plan = planSchedule(SchedulingProblem::of(model.graph, topo, costs, 2), s.name);
            if (plan.validation.valid && plan.schedule.clusters.size() >= 2)
                break;
            tried += " " + s.name + ":" + std::to_string(plan.schedule.clusters.size());
        }
        if (!plan.validation.valid || plan.schedule.clusters.size() < 2)
            throw Error(ErrorKind::Internal, {}, "no scheduler gives 2 workers (clusters:" + tried + ")");
        compiled->setInputs(inputs);
        compiled->parallelExecutor(plan.schedule)->run();
        return compiled->outputs();
    }

    std::vector<std::string> outputNames() const
    {
        std::vector<std::string> names;
        for (ValueId v : model.graph.outputs())
            names.push_back(model.graph.value(v).name);
        return names;
    }
};

}  // namespace

class TestRealModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Faster R-CNN: the same boxes, labels and scores as PyTorch's, within 1e-4
    // relative, serially, on 2 workers and in ONNX Runtime.
    void detector()
    {
        try {
            checkDetector();
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    void denseOutputs_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("reference");  // base of .input.npy and .output.npy
        const QString seg = realModelsDir() + "/lraspp_mobilenet_v3_large";
        QTest::newRow("lraspp_mobilenet_v3_large") << seg + ".onnx" << seg;
        // Factorized 3-D convolutions on the 2-D path, 3-D max pooling in both layouts.
        for (const char* video : {"s3d", "r2plus1d_18"}) {
            const QString base = realModelsDir() + "/" + video;
            QTest::newRow(video) << base + ".onnx" << base;
        }
        QTest::newRow("swin_t") << test::modelPath("swin_t") << test::modelsDir() + "/swin_t";
    }

    // Segmentation, video and swin_t: PyTorch's output within 1e-4 of the output's range,
    // serially and on 2 workers.
    void denseOutputs()
    {
        QFETCH(QString, path);
        QFETCH(QString, reference);
        try {
            checkDense(path, reference);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

    void sequenceModels_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("sequence_tagger") << "sequence_tagger";
        QTest::newRow("packed_sequences") << "packed_sequences";
        QTest::newRow("causal_lm") << "causal_lm";
    }

    // PyTorch's LSTM, GRU and RNN layers (bidirectional, stacked, batch-first, ragged
    // sequence lengths) and a causal transformer (a Trilu mask, attention, LogSoftmax, ArgMax):
    // every output within 1e-4 of PyTorch's range, serially on one and two threads (the two
    // directions at once) and on 2 workers.
    void sequenceModels()
    {
        QFETCH(QString, name);
        const QString base = realModelsDir() + "/" + name;
        try {
            Runs r(base + ".onnx");
            std::vector<Tensor> inputs, refs;
            for (int i = 0; QFile::exists(QString("%1.input_%2.npy").arg(base).arg(i)); ++i)
                inputs.push_back(readNpy(QString("%1.input_%2.npy").arg(base).arg(i).toStdString()));
            for (int i = 0; QFile::exists(QString("%1.output_%2.npy").arg(base).arg(i)); ++i)
                refs.push_back(readNpy(QString("%1.output_%2.npy").arg(base).arg(i).toStdString()));
            QVERIFY(!inputs.empty() && !refs.empty());
            for (const auto& [what, got] : {std::make_pair(QString("1 thread"), r.serial(inputs, 1)),
                                            std::make_pair(QString("2 threads"), r.serial(inputs, 2)),
                                            std::make_pair(QString("2 workers"), r.parallel(inputs))}) {
                QCOMPARE(got.size(), refs.size());
                for (size_t i = 0; i < refs.size(); ++i) {
                    QCOMPARE(got[i].dims, refs[i].dims);
                    const double d = test::relativeDifference(got[i], refs[i]);
                    qInfo("%s, %s, output %zu: largest difference to PyTorch %.2e of its range", qPrintable(name),
                          qPrintable(what), i, d);
                    QVERIFY2(d < kTolerance, qPrintable(QString("%1 output %2: %3").arg(what).arg(i).arg(d)));
                }
            }
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
    }

private:
    void checkDetector()
    {
        QElapsedTimer timer;
        timer.start();
        const QString base = realModelsDir() + "/" + kDetector;
        Runs r(base + ".onnx");
        const Tensor image = readNpy((base + ".input.npy").toStdString());
        std::vector<Tensor> ref;
        for (const char* part : {".boxes.npy", ".labels.npy", ".scores.npy"})
            ref.push_back(readNpy((base + part).toStdString()));
        QVERIFY2(ref[2].numel() >= 5, "fewer than 5 boxes survive in PyTorch: the test would prove little");
        const std::vector<Tensor> serial = r.serial({image}), parallel = r.parallel({image});
        auto compare = [&](const char* what, const std::vector<Tensor>& got, const std::vector<Tensor>& against,
                           const char* reference) {
            QString worst;
            const double d = detectionDifference(got, against, worst);
            qInfo("%s, %s: %lld detections against %lld of %s, largest difference %.2e (%s)", kDetector, what,
                  (long long)got[2].numel(), (long long)against[2].numel(), reference, d, qPrintable(worst));
            return std::make_pair(d, QString(what) + " against " + reference + ": " + worst);
        };
        const auto onWorkers = compare("2 workers", parallel, serial, "serial");
        QVERIFY2(onWorkers.first <= kTolerance, qPrintable(onWorkers.second));
        bool ortMatchesPyTorch = true;
        if (const QString modules = test::ortModulesPath(); !modules.isEmpty()) {
            const std::vector<Tensor> ort = runInOrt(modules, base + ".onnx", base + ".input.npy", serial, r.outputNames());
            const auto vsOrt = compare("serial", serial, ort, "ONNX Runtime");
            QVERIFY2(vsOrt.first <= kTolerance, qPrintable(vsOrt.second));
            ortMatchesPyTorch = compare("ONNX Runtime", ort, ref, "PyTorch").first <= kTolerance;
        } else {
            qInfo("ONNX Runtime is not installed: compared with PyTorch only");
        }
        const auto vsPyTorch = compare("serial", serial, ref, "PyTorch");
        if (!ortMatchesPyTorch)  // the exported graph itself, not the runtime (docs/testing.md)
            QEXPECT_FAIL("", "the exported graph's detections differ from eager PyTorch's in ONNX Runtime too", Continue);
        QVERIFY2(vsPyTorch.first <= kTolerance, qPrintable(vsPyTorch.second));
        qInfo("%s: %.1f s", kDetector, timer.elapsed() / 1000.0);
    }

    void checkDense(const QString& path, const QString& reference)
    {
        Runs r(path);
        const Tensor input = readNpy((reference + ".input.npy").toStdString());
        const Tensor ref = readNpy((reference + ".output.npy").toStdString());
        for (const auto& [what, got] : {std::make_pair(QString("serial"), r.serial({input})),
                                        std::make_pair(QString("2 workers"), r.parallel({input}))}) {
            const double d = test::relativeDifference(got[0], ref);
            qInfo("%s, %s: largest difference to PyTorch %.2e of the output's range", qPrintable(QFileInfo(path).baseName()),
                  qPrintable(what), d);
            QVERIFY2(d < kTolerance, qPrintable(what + ": " + QString::number(d)));
        }
    }
};

QTEST_GUILESS_MAIN(TestRealModels)
#include "tst_real_models.moc"
