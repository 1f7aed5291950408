// The core pipeline (core/pipeline): one table of plan options drives the
// CLI, Studio's Tuning rows and docs/cli.md; the CLI's plans are the
// pipeline's; the pipeline's plans are what its stages make by hand.
#include "core/onnx/onnx_import.h"
#include "core/pipeline/pipeline.h"
#include "core/report/schedule_json.h"
#include "core/util/error.h"
#include "test_support.h"

#include <QFile>
#include <QtTest>

#include <cmath>
#include <set>

using namespace ramiel;

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
