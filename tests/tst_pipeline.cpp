// The core pipeline (core/pipeline): one table of plan options drives the
// CLI, Studio's Tuning rows and docs/cli.md; the CLI's plans are the
// pipeline's; the pipeline's plans are what its stages make by hand.
#include "core/onnx/onnx_import.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/run_inputs.h"
#include "core/runtime/runtime.h"
#include "core/util/npy.h"
#include "onnx_builder.h"
#include "core/report/schedule_json.h"
#include "core/util/error.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <set>

using namespace ramiel;
using ramiel::test::OnnxBuilder;
using ramiel::test::writeModel;

namespace {

const QString kMachine = test::sourcePath("tests/data/machine.json");

// The long flag of a CLI11 spelling: "-p,--cores" -> "--cores".
QString longFlag(const std::string& flags)
{
    for (const QString& f : QString::fromStdString(flags).split(','))
        if (f.startsWith("--"))
            return f;
    return QString::fromStdString(flags);
}

// Planning times differ from run to run; everything else must not.
void dropTimes(nlohmann::json& j)
{
    if (j.is_object()) {
        j.erase("planning_seconds");
        for (auto& [key, value] : j.items())
            dropTimes(value);
    } else if (j.is_array()) {
        for (auto& value : j)
            dropTimes(value);
    }
}

pipeline::PrepareOptions fixedMachine(const std::string& passes = "none")
{
    pipeline::PrepareOptions o;
    o.machineFile = kMachine.toStdString();
    o.passes = passes;
    return o;
}

}  // namespace

class TestPipeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void optionsAreDeclaredOnce()
    {
        std::set<std::string> names, flags;
        for (const pipeline::PlanOption& o : pipeline::planOptions()) {
            QVERIFY2(names.insert(o.name).second, o.name.c_str());
            QVERIFY2(flags.insert(o.flags).second, o.flags.c_str());
            QVERIFY2(!o.help.empty() && !o.defaultText.empty(), o.name.c_str());
            QVERIFY2(longFlag(o.flags).startsWith("--"), o.flags.c_str());
        }
        std::vector<std::string> schedulerNames;
        for (const SchedulerInfo& s : schedulers())
            schedulerNames.push_back(s.name);
        QCOMPARE(pipeline::findPlanOption("algorithm").choices, schedulerNames);
        QVERIFY(pipeline::PlanSettings{}.clone);
        for (const std::string& pass : passes::parsePassList("all"))
            QVERIFY2(pass != "clone", "cloning is a plan option, not a pass");
    }

    void cliOptionsComeFromTheTable_data()
    {
        QTest::addColumn<QString>("command");
        for (const char* c : {"cluster", "compare", "bench", "export"})
            QTest::newRow(c) << QString(c);
    }

    void cliOptionsComeFromTheTable()
    {
        QFETCH(QString, command);
        const auto r = test::runCli({command, "--help"});
        QCOMPARE(r.exitCode, 0);
        for (const pipeline::PlanOption& o : pipeline::planOptions()) {
            if (command == "compare" && o.name == "algorithm")
                continue;  // compare runs every scheduler
            QVERIFY2(r.out.contains(longFlag(o.flags)), qPrintable(command + ": " + longFlag(o.flags)));
        }
        // The scheduler list in the help is the scheduler table's.
        if (command != "compare")
            QVERIFY2(r.out.contains(QString::fromStdString(pipeline::schedulerNames())), qPrintable(r.out));
    }

    void docsShowTheOptions()
    {
        QFile f(test::sourcePath("docs/cli.md"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const std::string table = pipeline::describePlanOptions();
        if (!f.readAll().contains(QByteArray::fromStdString(table)))
            QFAIL(qPrintable("docs/cli.md does not show the plan options as they are now:\n" +
                             QString::fromStdString(table)));
    }

    void cliPlanIsThePipelinePlan_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("passes");
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        QTest::newRow("sample linear P=2") << sample << QStringList{"-p", "2"} << "none";
        QTest::newRow("sample heft P=3 no clone") << sample << QStringList{"-p", "3", "-a", "heft", "--no-clone"}
                                                 << "none";
        QTest::newRow("googlenet dsc P=4") << test::modelPath("googlenet") << QStringList{"-p", "4", "-a", "dsc"}
                                           << "none";
        QTest::newRow("inception_v3 B=4 d=2 passes") << test::modelPath("inception_v3")
                                                     << QStringList{"-p", "2", "-b", "4", "-d", "2"} << "default";
    }

    void cliPlanIsThePipelinePlan()
    {
        QFETCH(QString, model);
        QFETCH(QStringList, args);
        QFETCH(QString, passes);
        const auto r = test::runCli(QStringList{"cluster", model, "--machine", kMachine, "--passes", passes, "--json",
                                                "--gantt"} +
                                    args);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        nlohmann::json fromCli = nlohmann::json::parse(r.out.toStdString());

        pipeline::PlanSettings s;
        s.workers = args.at(args.indexOf("-p") + 1).toInt();
        if (args.contains("-a"))
            s.algorithm = args.at(args.indexOf("-a") + 1).toStdString();
        if (args.contains("-b"))
            s.batch = args.at(args.indexOf("-b") + 1).toInt();
        if (args.contains("-d"))
            s.degree = args.at(args.indexOf("-d") + 1).toInt();
        s.clone = !args.contains("--no-clone");
        const auto prepared = pipeline::prepare(model.toStdString(), fixedMachine(passes.toStdString()));
        const auto planned = pipeline::plan(prepared, s, pipeline::costTable(*prepared, s), true);
        nlohmann::json fromPipeline = planToJson(prepared->model.graph, planned->problem, planned->plan, true);
        dropTimes(fromCli);
        dropTimes(fromPipeline);
        QVERIFY(fromCli == fromPipeline);
    }

    // The pipeline strings the stages together and adds nothing of its own.
    void pipelinePlansAsItsStages()
    {
        const std::string path = test::modelPath("googlenet").toStdString();
        const auto prepared = pipeline::prepare(path, fixedMachine("default"));
        Model byHand = loadOnnx(path);
        passes::runPipeline(byHand, passes::parsePassList("default"), {});
        QCOMPARE(prepared->model.graph.nodeCount(), byHand.graph.nodeCount());
        QCOMPARE(prepared->source->graph.nodeCount(), loadOnnx(path).graph.nodeCount());

        pipeline::PlanSettings s;
        s.workers = 2;
        const pipeline::Costs costs = pipeline::costTable(*prepared, s);
        const auto planned = pipeline::plan(prepared, s, costs);
        SchedulingProblem p = SchedulingProblem::of(prepared->model.graph, prepared->topo, *costs.table, 2);
        const Plan plan = planSchedule(p, "linear");
        QCOMPARE(planned->plan.schedule.owner, plan.schedule.owner);
        QCOMPARE(planned->plan.simulation.makespan, plan.simulation.makespan);
        const std::vector<int> threads = threadsPerWorker(plan, *costs.table, 2);
        QCOMPARE(planned->plan.schedule.workerThreads, std::vector<int32_t>(threads.begin(), threads.end()));
        QCOMPARE(planned->loads, clusterLoads(plan.schedule, *costs.table));
        // The per-node maps agree with the schedule.
        for (size_t i = 0; i < plan.schedule.instanceCount(); ++i)
            QCOMPARE(planned->clusterOfNode[0][i], plan.schedule.owner[i]);
        for (NodeId n : planned->metrics.criticalPath)
            QVERIFY(planned->onCriticalPath[size_t(n)]);
    }

    void teachingStepsReplayTheLinearScheduler()
    {
        const auto prepared = pipeline::prepare(test::modelPath("inception_v3").toStdString(), fixedMachine());
        pipeline::PlanSettings s;
        s.workers = 2;
        const auto planned = pipeline::plan(prepared, s, pipeline::costTable(*prepared, s));
        const pipeline::TeachingSteps t = pipeline::teachingSteps(*planned);
        QVERIFY(t.paths.size() > 2);
        for (double seconds : t.pathSeconds)  // the first path peeled is the heaviest
            QVERIFY(seconds <= t.pathSeconds.front());
        QCOMPARE(t.merges.size() + planned->plan.schedule.clusters.size(), t.paths.size());
        QCOMPARE(t.merges, planned->plan.merges.steps);
        size_t nodes = 0;
        for (const auto& path : t.paths)
            nodes += path.size();
        QCOMPARE(nodes, prepared->model.graph.nodeCount());
    }

    void badSettingsAreUsageErrors_data()
    {
        QTest::addColumn<QString>("setting");
        QTest::newRow("d > B") << "degree";
        QTest::newRow("unknown algorithm") << "algorithm";
        QTest::newRow("measured without a run") << "costs";
    }

    void badSettingsAreUsageErrors()
    {
        QFETCH(QString, setting);
        const auto prepared =
            pipeline::prepare(test::sourcePath("resources/models/inception_sample.onnx").toStdString(), fixedMachine());
        pipeline::PlanSettings s;
        s.workers = 2;
        if (setting == "degree")
            s.degree = 2;
        if (setting == "algorithm")
            s.algorithm = "ios";
        if (setting == "costs")
            s.costs = "measured";
        try {
            pipeline::plan(prepared, s, pipeline::costTable(*prepared, s));
            QFAIL("accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
        }
    }

    // Every step of the teaching as a schedule: valid, the paths peeled so far
    // (and one cluster for the rest) or the groups merged so far, each node in
    // the cluster of its color, loads summing to the serial work.
    // The inputs runs read from files (--input): as the run takes them, or where the first axis
    // counts samples, one sample repeated to the batch or the first of more (bench, tune), or as
    // the file holds them (run, profile). Data that does not fit is an error naming the file.
    void runInputsFitTheBatch_data()
    {
        QTest::addColumn<QVector<int>>("file");  // the file's sizes; its rows are numbered 0, 1, ...
        QTest::addColumn<int>("samples");
        QTest::addColumn<bool>("asHeld");
        QTest::addColumn<QVector<int>>("rows");  // the rows the run reads, by number; empty: refused
        QTest::newRow("the run's input") << QVector<int>{2, 3} << 2 << false << QVector<int>{0, 1};
        QTest::newRow("one sample, repeated") << QVector<int>{1, 3} << 3 << false << QVector<int>{0, 0, 0};
        QTest::newRow("more samples, the first") << QVector<int>{4, 3} << 2 << false << QVector<int>{0, 1};
        QTest::newRow("more samples, as held") << QVector<int>{4, 3} << 2 << true << QVector<int>{0, 1, 2, 3};
        QTest::newRow("one sample, as held") << QVector<int>{1, 3} << 3 << true << QVector<int>{0};
        QTest::newRow("fewer samples than the run") << QVector<int>{2, 3} << 3 << false << QVector<int>{};
        QTest::newRow("another row size") << QVector<int>{2, 4} << 2 << false << QVector<int>{};
        QTest::newRow("another row size, as held") << QVector<int>{2, 4} << 2 << true << QVector<int>{};
        QTest::newRow("another rank") << QVector<int>{6} << 2 << true << QVector<int>{};
    }
    void runInputsFitTheBatch()
    {
        QFETCH(QVector<int>, file);
        QFETCH(int, samples);
        QFETCH(bool, asHeld);
        QFETCH(QVector<int>, rows);
        OnnxBuilder b;
        b.input("x", {1, 3}, onnx::TensorProto::FLOAT, {"batch"}).input("y", {2}).output("z");
        b.node("Relu", {"x"}, {"z"});
        b.node("Relu", {"y"}, {"w"});
        b.output("w");
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.onnx").toStdString();
        QVERIFY(writeModel(b, path));
        Tensor data;
        data.dtype = DataType::Float;
        data.dims.assign(file.begin(), file.end());
        for (int64_t i = 0; i < data.numel(); ++i) {
            const float v = float(i / (file.size() > 1 ? file[1] : 1));
            data.data.append(reinterpret_cast<const char*>(&v), sizeof v);
        }
        const std::string npy = dir.filePath("x.npy").toStdString();
        writeNpy(npy, data);
        const Model m = pipeline::loadModel(path, {});
        const auto compiled = runtime().compile(m);
        const auto fit = asHeld ? pipeline::FileSamples::AsHeld : pipeline::FileSamples::ToBatch;
        try {
            const std::vector<Tensor> in = pipeline::runInputs(m, *compiled, {"x=" + npy}, samples, 7, fit);
            QVERIFY2(!rows.isEmpty(), "accepted");
            QCOMPARE(in[0].dims, (std::vector<int64_t>{int64_t(rows.size()), 3}));
            std::vector<double> expected;
            for (int r : rows)
                expected.insert(expected.end(), 3, double(r));
            QCOMPARE(*in[0].toDoubles(), expected);
            QCOMPARE(in[1].dims, (std::vector<int64_t>{2 * samples}));  // random, at the batch
            if (!asHeld)
                compiled->setInputs(in);  // the runtime takes them (as held, x's batch is not y's)
        } catch (const Error& e) {
            QVERIFY2(rows.isEmpty(), e.what());
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(QString(e.what()).contains(QString::fromStdString(npy)) && QString(e.what()).contains("input 'x'"), e.what());
        }
    }

    // A file sizes the input it is read into where the model leaves the sizes open, and only there.
    void openInputsSizedByTheirFiles()
    {
        OnnxBuilder b;
        b.input("img", {3, -1, -1}, onnx::TensorProto::FLOAT, {"", "H", "W"}).input("v", {4}).output("y");
        b.input("batch", {-1, 3, -1}, onnx::TensorProto::FLOAT, {"N", "", "L"});
        b.node("Relu", {"img"}, {"y"});
        b.node("Relu", {"v"}, {"u"});
        b.node("Relu", {"batch"}, {"z"});
        b.output("u").output("z");
        QTemporaryDir dir;
        const std::string path = dir.filePath("open.onnx").toStdString();
        QVERIFY(writeModel(b, path));
        auto npy = [&](const std::string& name, std::vector<int64_t> dims) {
            Tensor t;
            t.dtype = DataType::Float;
            t.dims = std::move(dims);
            t.data.assign(size_t(t.numel()) * 4, '\0');
            writeNpy(dir.filePath(QString::fromStdString(name)).toStdString(), t);
            return name + "=" + dir.filePath(QString::fromStdString(name)).toStdString();
        };
        const std::string img = npy("img", {3, 20, 28}), v = npy("v", {4}), batch = npy("batch", {2, 3, 9});
        const auto sizes = [](const Model& m, size_t i) { return m.graph.value(m.graph.inputs()[i]).type.shape->toString(); };
        const auto model = pipeline::readModel(path, {}, pipeline::SymbolicBatch::OneSample, {img, v, batch});
        QCOMPARE(sizes(*model, 0), std::string("3x20x28"));
        QCOMPARE(sizes(*model, 1), std::string("4"));
        QCOMPARE(sizes(*model, 2), std::string("1x3x9"));  // a symbolic batch: the data's axis counts samples
        QVERIFY(model->oneSampleInput("batch"));
        const auto shaped = pipeline::readModel(path, {"img=3,8,8"}, pipeline::SymbolicBatch::OneSample, {img});
        QCOMPARE(sizes(*shaped, 0), std::string("3x8x8"));  // --shape wins
        pipeline::PrepareOptions o;
        o.inputs = {img, batch};
        const Model m = pipeline::loadModel(path, o);
        const auto compiled = runtime().compile(m);
        compiled->setInputs(pipeline::runInputs(m, *compiled, o.inputs, 1, 1));
        compiled->serialExecutor(1)->run();
        QCOMPARE(compiled->outputs()[0].dims, (std::vector<int64_t>{3, 20, 28}));
        QCOMPARE(compiled->outputs()[2].dims, (std::vector<int64_t>{1, 3, 9}));  // the file's first sample (bench's rule)
        try {
            pipeline::readModel(path, {}, pipeline::SymbolicBatch::OneSample, {"img=" + dir.filePath("none.npy").toStdString()});
            QFAIL("read");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Io);
        }
    }

    void teachingStatesAreValidSchedules_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("workers");
        QTest::newRow("sample P=2") << test::sourcePath("resources/models/inception_sample.onnx") << 2;
        QTest::newRow("googlenet P=3") << test::modelPath("googlenet") << 3;
    }
    void teachingStatesAreValidSchedules()
    {
        QFETCH(QString, model);
        QFETCH(int, workers);
        const auto prepared = pipeline::prepare(model.toStdString(), fixedMachine());
        pipeline::PlanSettings s;
        s.workers = workers;
        const auto planned = pipeline::plan(prepared, s, pipeline::costTable(*prepared, s));
        const pipeline::TeachingSteps steps = pipeline::teachingSteps(*planned);
        const int peeled = int(steps.paths.size()), merged = int(steps.merges.size());
        QVERIFY(peeled > workers && merged > 0);
        for (int step = 0; step < peeled + merged; ++step) {
            const pipeline::TeachingState st = pipeline::teachingState(*planned, steps, step);
            const Schedule& sched = st.schedule;
            const bool rest = step < peeled - 1;
            QCOMPARE(st.groups, step < peeled ? step + 1 : peeled - (step - peeled) - 1);
            QCOMPARE(int(sched.clusters.size()), st.groups + (rest ? 1 : 0));
            QCOMPARE(st.clusterColors.size(), sched.clusters.size());
            QCOMPARE(st.clusterColors.back() == -1, rest);
            for (size_t n = 0; n < st.clusterOfNode.size(); ++n)
                QCOMPARE(st.clusterColors[size_t(sched.owner[n])], st.clusterOfNode[n]);
            if (step < peeled)
                QCOMPARE(st.current, steps.paths[size_t(step)]);
            const auto p = pipeline::teachingPlan(*planned, steps, st);
            QVERIFY2(p->plan.validation.valid, qPrintable(QString("step %1").arg(step)));
            double load = 0;
            for (double l : p->loads)
                load += l;
            QVERIFY(std::abs(load - p->plan.simulation.serial) <= 1e-6 * load);
        }
        // After the last merge: as many groups as the linear plan has clusters.
        QCOMPARE(pipeline::teachingState(*planned, steps, peeled + merged - 1).groups,
                 int(planned->plan.schedule.clusters.size()));
        try {
            pipeline::teachingState(*planned, steps, peeled + merged);
            QFAIL("accepted a step past the merges");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
        }
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
