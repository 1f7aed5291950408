// The libtorch runtime on real models: serial output equals PyTorch's own,
// parallel output equals serial for every scheduler and configuration, errors
// name the operator, node or input, and repeated parallel runs agree.
#include "core/analysis/cost_model.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QElapsedTimer>
#include <QtTest>

#include <cmath>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

using test::relativeDifference;

struct Loaded {
    Model model;
    Topology topo;
    std::unique_ptr<CostTable> costs;
    std::unique_ptr<CompiledModel> compiled;

    explicit Loaded(const QString& name)
        : model(loadOnnx(test::modelPath(name).toStdString())), topo(buildTopology(model.graph))
    {
        costs = std::make_unique<CostTable>(
            CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{}, EdgeCostParameters{}));
        compiled = runtime().compile(model);
    }

    Schedule plan(const std::string& algo, int workers, int batch, int degree) const
    {
        return planSchedule(SchedulingProblem::of(model.graph, topo, *costs, workers, batch, degree), algo).schedule;
    }
};

}  // namespace

class TestRuntime : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matchesPyTorch_data() { test::addTorchvisionRows(); }

    // The exported model on PyTorch's reference input gives PyTorch's output.
    void matchesPyTorch()
    {
        QFETCH(QString, name);
        Loaded l(name);
        const QString base = test::modelsDir() + "/" + name;
        l.compiled->setInputs({readNpy((base + ".input.npy").toStdString())});
        l.compiled->serialExecutor(1)->run();
        const double d = relativeDifference(l.compiled->outputs()[0], readNpy((base + ".output.npy").toStdString()));
        qInfo("%s: max difference to PyTorch %.2e of the output's range", qPrintable(name), d);
        QVERIFY2(d < 1e-4, qPrintable(QString::number(d)));
    }

    void parallelEqualsSerial_data() { test::addTorchvisionRows(); }

    // Every scheduler, P in {2, 4}, batch 1 and batch 4 with d in {1, 2, 4}.
    void parallelEqualsSerial()
    {
        QFETCH(QString, name);
        Loaded l(name);
        int runs = 0;
        for (const auto& [batch, degree] : std::vector<std::pair<int, int>>{{1, 1}, {4, 1}, {4, 2}, {4, 4}}) {
            l.compiled->setInputs(l.compiled->randomInputs(batch, 7));
            l.compiled->serialExecutor(1)->run();
            const std::vector<Tensor> serial = l.compiled->outputs();
            for (int workers : {2, 4})
                for (const SchedulerInfo& s : schedulers()) {
                    const Schedule schedule = l.plan(s.name, workers, batch, degree);
                    l.compiled->parallelExecutor(schedule)->run();
                    const auto parallel = l.compiled->outputs();
                    const QString where = QString("%1 P=%2 B=%3 d=%4").arg(QString::fromStdString(s.name)).arg(workers).arg(batch).arg(degree);
                    QCOMPARE(parallel.size(), serial.size());
                    for (size_t i = 0; i < serial.size(); ++i) {
                        QCOMPARE(parallel[i].dims, serial[i].dims);
                        QVERIFY2(relativeDifference(parallel[i], serial[i]) < 1e-5, qPrintable(where));
                    }
                    ++runs;
                }
        }
        qInfo("%s: %d parallel configurations equal the serial output", qPrintable(name), runs);
    }

    // A hybrid schedule (serial parts on 2 intra-op threads, node by node) gives
    // the serial output, on batch 1 and run after run.
    void hybridEqualsSerial_data() { test::addTorchvisionRows(); }
    void hybridEqualsSerial()
    {
        QFETCH(QString, name);
        Loaded l(name);
        l.compiled->setInputs(l.compiled->randomInputs(1, 5));
        l.compiled->serialExecutor(1)->run();
        const std::vector<Tensor> serial = l.compiled->outputs();
        // Costs on 2 threads: 0.75 of the static costs, so the cuts are worth threading
        // and stretches with parallel branches mostly are not: workers switch counts.
        std::vector<double> threaded(l.model.graph.nodeCount());
        for (size_t n = 0; n < threaded.size(); ++n)
            threaded[n] = l.costs->node(NodeId(n), 1) * 0.75;
        l.costs->setThreadedSeconds(2, threaded, 1);
        SchedulingProblem p = SchedulingProblem::of(l.model.graph, l.topo, *l.costs, 2);
        p.hybridThreads = 2;
        const Plan plan = planSchedule(p, "linear");
        QVERIFY(plan.validation.valid);
        QVERIFY2(plan.hybrid.applied(), qPrintable(QString::fromStdString(plan.hybrid.skipped)));
        const auto executor = l.compiled->parallelExecutor(plan.schedule);
        for (int run = 0; run < 3; ++run) {
            executor->run();
            const auto hybrid = l.compiled->outputs();
            QCOMPARE(hybrid.size(), serial.size());
            for (size_t i = 0; i < serial.size(); ++i)
                QVERIFY2(relativeDifference(hybrid[i], serial[i]) < 1e-5, qPrintable(QString("run %1").arg(run)));
        }
        qInfo("%s: hybrid with %d cut nodes, %d of %d stretches on one worker, %d nodes on 2 threads", qPrintable(name),
              plan.hybrid.cuts, plan.hybrid.stretchesMoved, plan.hybrid.stretches, plan.hybrid.threadedInstances);
    }

    // 500 parallel runs of googlenet, P = 4, back to back: identical outputs, no hang.
    void stress()
    {
        Loaded l("googlenet");
        l.compiled->setInputs(l.compiled->randomInputs(1, 3));
        const auto executor = l.compiled->parallelExecutor(l.plan("linear", 4, 1, 1));
        executor->run();
        const std::vector<Tensor> first = l.compiled->outputs();
        QElapsedTimer timer;
        timer.start();
        const int runs = 500;
        for (int i = 0; i < runs; ++i) {
            executor->run();
            const auto out = l.compiled->outputs();
            QVERIFY2(out[0].data == first[0].data, qPrintable(QString("run %1 differs").arg(i)));
        }
        qInfo("%d parallel runs of googlenet (P = 4 on this machine's cores): %.1f ms each", runs,
              double(timer.elapsed()) / runs);
    }

    void unsupportedOperatorIsNamed()
    {
        OnnxBuilder b;
        b.input("x", {2, 3}).output("y", {2, 3});
        b.node("Relu", {"x"}, {"r"}, "fine");
        b.node("Det", {"r"}, {"y"}, "the_det_node");
        const Model m = loadOnnxFromBytes(b.bytes(), "det.onnx", {});
        try {
            runtime().compile(m);
            QFAIL("compiled");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Unsupported);
            QVERIFY2(QString(e.what()).contains("Det") && QString(e.what()).contains("the_det_node"), e.what());
        }
    }

    void wrongInputShapeIsNamed()
    {
        const Model m = loadOnnx(test::sourcePath("resources/models/inception_sample.onnx").toStdString());
        const auto compiled = runtime().compile(m);
        Tensor t;
        t.dtype = DataType::Float;
        t.dims = {1, 3, 32, 32};
        t.data.assign(size_t(3 * 32 * 32 * 4), '\0');
        try {
            compiled->setInputs({t});
            QFAIL("accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(QString(e.what()).contains("input 'image'"), e.what());
        }
    }

    // A node that fails at run time stops a parallel run with its name; no worker hangs.
    void failingNodeStopsParallelRun()
    {
        OnnxBuilder b;
        b.input("x", {2, 6}).input("shape", {2}, onnx::TensorProto::INT64).output("y", {-1, -1});
        b.node("Relu", {"x"}, {"a"}, "left");
        b.node("Reshape", {"a", "shape"}, {"bad"}, "the_reshape");
        b.node("Neg", {"x"}, {"c"}, "right");
        b.node("Neg", {"c"}, {"d"}, "right2");
        b.node("Add", {"bad", "d"}, {"y"}, "join");
        const Model m = loadOnnxFromBytes(b.bytes(), "fail.onnx", {});
        const Topology topo = buildTopology(m.graph);
        const CostTable costs =
            CostTable::fromStatic(m.graph, topo, estimateCosts(m.graph), MachineConstants{}, EdgeCostParameters{});
        const SchedulingProblem p = SchedulingProblem::of(m.graph, topo, costs, 2);
        const auto compiled = runtime().compile(m);
        Tensor x;
        x.dtype = DataType::Float;
        x.dims = {2, 6};
        x.data.assign(48, '\0');
        Tensor shape;
        shape.dtype = DataType::Int64;
        shape.dims = {2};
        const int64_t bad[2] = {5, 5};  // 25 elements from 12: fails
        shape.data.assign(reinterpret_cast<const char*>(bad), 16);
        compiled->setInputs({x, shape});
        for (const SchedulerInfo& s : schedulers()) {
            const auto executor = compiled->parallelExecutor(planSchedule(p, s.name).schedule);
            for (int attempt = 0; attempt < 3; ++attempt) {  // and the executor stays usable
                try {
                    executor->run();
                    QFAIL("ran");
                } catch (const Error& e) {
                    QCOMPARE(e.kind(), ErrorKind::Runtime);
                    QVERIFY2(QString(e.what()).contains("the_reshape"), e.what());
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
