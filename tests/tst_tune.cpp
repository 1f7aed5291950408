// The tuner and what it stands on: costs at several thread counts, schedules
// that carry their workers' threads, run configurations as files, and
// `ramiel tune` on a graph of four equal independent branches.
#include "core/onnx/onnx_import.h"
#include "core/pipeline/run_config.h"
#include "core/pipeline/tune.h"
#include "core/runtime/runtime.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/simulator.h"
#include "core/schedule/thread_choice.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <vector>

using namespace ramiel;

namespace {

// Four branches of 32 small element-wise nodes each, joined by Adds (as
// bench/four_branches.py writes them). Each node works on 16,384 floats: too
// few for ATen to split across threads, so only running branches side by side gains.
std::string fourBranchModel()
{
    test::OnnxBuilder b;
    b.input("x", {1, 16384});
    for (int branch = 0; branch < 4; ++branch) {
        std::string last = "x";
        for (int k = 0; k < 32; ++k) {
            const std::string out = "b" + std::to_string(branch) + "_" + std::to_string(k);
            b.node(k % 2 ? "Tanh" : "Sigmoid", {last}, {out}, out);
            last = out;
        }
    }
    b.node("Add", {"b0_31", "b1_31"}, {"s01"}, "add01");
    b.node("Add", {"b2_31", "b3_31"}, {"s23"}, "add23");
    b.node("Add", {"s01", "s23"}, {"y"}, "add");
    b.output("y", {1, 16384});
    return b.bytes();
}

CostTable table(const test::SpecGraph& g, const Topology& topo)
{
    std::vector<double> perSample(g.cost.begin(), g.cost.end());
    return CostTable::fromSeconds(topo, perSample, EdgeCostParameters{0, 1e12});
}

}  // namespace

class TestTune : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void costsAtMeasuredCountsAreExact()
    {
        const auto g = test::graphFromSpec("A:10 B:10 ; A>B");
        const Topology topo = buildTopology(g.graph);
        CostTable t = table(g, topo);
        t.setThreadedSeconds(2, {6, 12}, 1);
        t.setThreadedSeconds(4, {4, 15}, 1);
        QCOMPARE(t.threadedCounts(), (std::vector<int>{2, 4}));
        QCOMPARE(t.threadedCount(), 4);
        QCOMPARE(t.node(0, 1, 2), 6.0);
        QCOMPARE(t.node(0, 1, 4), 4.0);
        QCOMPARE(t.node(0, 3, 4), 12.0);  // per sample
        QVERIFY(t.measuredAt(2) && !t.measuredAt(3));
    }

    void costsBetweenAndBeyondFollowAmdahl()
    {
        const auto g = test::graphFromSpec("A:10 B:10 ; A>B");
        const Topology topo = buildTopology(g.graph);
        CostTable t = table(g, topo);
        t.setThreadedSeconds(2, {6, 12}, 1);  // A: parallel fraction 0.8; B slows down
        // A at 4 threads from the 2-thread fit: 10 * (0.2 + 0.8 / 4) = 4.
        QVERIFY(std::abs(t.node(0, 1, 4) - 4.0) < 1e-9);
        QVERIFY(t.node(1, 1, 4) > 12.0);  // slower still, up to the fitted limit
        QVERIFY(t.node(1, 1, 64) <= 14.0 + 1e-9);
        QCOMPARE(chooseThreads({{0, 1, 8}}, t, 1), std::vector<int>{8});
        QCOMPARE(chooseThreads({{1, 1, 8}}, t, 1), std::vector<int>{1});
        // No count measured: no speedup assumed.
        const CostTable plain = table(g, topo);
        QCOMPARE(plain.node(0, 1, 4), 10.0);
    }

    // A profile's whole-run median beyond its nodes' medians is the executor's own
    // time: each measured node pays an equal share, on each thread count.
    void measuredTablesCountTheUntimedShare()
    {
        const auto g = test::graphFromSpec("A:10 B:10 ; A>B");
        const Topology topo = buildTopology(g.graph);
        QTemporaryDir dir;
        const std::string path = dir.filePath("costs.json").toStdString();
        std::ofstream(path) << R"({"schema": "ramiel.costs/1", "batch": 1, "threads": 1, "runs": 5,
            "median_total": 0.014, "nodes": {"A": 0.004, "B": 0.006},
            "threaded": [{"threads": 2, "runs": 5, "median_total": 0.007, "nodes": {"A": 0.002, "B": 0.004}}]})";
        const CostTable t = CostTable::fromMeasured(path, g.graph, topo, table(g, topo));
        QVERIFY(std::abs(t.untimedSeconds(1) - 0.002) < 1e-12);
        QVERIFY(std::abs(t.node(0, 1) - 0.006) < 1e-12);
        QVERIFY(std::abs(t.node(1, 1, 2) - 0.0045) < 1e-12);
        Schedule s = emptySchedule(SchedulingProblem::of(g.graph, topo, t, 1), "test");
        s.clusters = {{0, 1}};
        QVERIFY(std::abs(simulate(s, t).makespan - 0.014) < 1e-12);
    }

    void simulationCostsItemsAtTheirWorkersThreads()
    {
        const auto g = test::graphFromSpec("A:10 B:10 ; A>B");
        const Topology topo = buildTopology(g.graph);
        CostTable t = table(g, topo);
        t.setThreadedSeconds(2, {5, 5}, 1);
        SchedulingProblem p = SchedulingProblem::of(g.graph, topo, t, 1);
        Schedule s = emptySchedule(p, "test");
        s.clusters = {{0, 1}};
        QCOMPARE(simulate(s, t).makespan, 20.0);
        s.workerThreads = {2};
        QCOMPARE(simulate(s, t).makespan, 10.0);
        s.threads = {1, 0};  // A on one thread, B as its worker
        QCOMPARE(simulate(s, t).makespan, 15.0);
        QCOMPARE(s.maxThreads(), 2);
        // The threads survive the trip through JSON.
        const Schedule back = scheduleFromJson(scheduleToJson(s), topo);
        QCOMPARE(back.workerThreads, s.workerThreads);
        QCOMPARE(back.threads, s.threads);
    }

    void runConfigRoundTrips()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/model.onnx").toStdString();
        std::ofstream(path, std::ios::binary) << fourBranchModel();
        pipeline::PrepareOptions o;
        o.passes = "default";
        o.machineFile = test::sourcePath("tests/data/machine.json").toStdString();
        const auto prepared = pipeline::prepare(path, o);

        pipeline::RunConfig c;
        c.model = path;
        c.settings.workers = 2;
        c.schedule = pipeline::oneWorkerSchedule(*prepared, 1, 2);
        c.schedule->threads.assign(c.schedule->instanceCount(), 1);
        const std::string file = (dir.path() + "/config.json").toStdString();
        pipeline::writeRunConfig(file, c);
        const pipeline::RunConfig back = pipeline::readRunConfig(file);
        QCOMPARE(back.label(), c.label());
        QCOMPARE(back.passes, std::string("default"));
        const Schedule s = pipeline::scheduleFor(back, *prepared, file);
        QCOMPARE(s.clusters, c.schedule->clusters);
        QCOMPARE(s.workerThreads, (std::vector<int32_t>{2}));

        pipeline::RunConfig serial;
        serial.serialThreads = 2;
        QCOMPARE(serial.label(), std::string("serial (1 worker x 2 threads)"));
        QCOMPARE(pipeline::scheduleFor(serial, *prepared).clusters.size(), size_t(1));

        // A schedule of another graph (no passes: more nodes) is refused, naming the file.
        pipeline::PrepareOptions none = o;
        none.passes = "none";
        const auto other = pipeline::prepare(path, none);
        if (other->model.graph.nodeCount() != prepared->model.graph.nodeCount()) {
            try {
                pipeline::scheduleFor(back, *other, file);
                QFAIL("a schedule of another graph was accepted");
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::Usage);
                QVERIFY(std::string(e.what()).find(file) != std::string::npos);
            }
        }
    }

    // The choice among measured candidates: the fastest, unless it is not
    // serial and within 3 % of the best serial configuration.
    void choiceKeepsSerialOnATie_data()
    {
        QTest::addColumn<int>("fastestWorkers");  // 1: per-node threads on one worker
        QTest::addColumn<double>("fastestMs");
        QTest::addColumn<QString>("chosen");
        QTest::addColumn<QString>("verdictStart");
        QTest::newRow("two workers, clear gain") << 2 << 5.0 << "linear (2 workers x 1 thread)" << "linear (2";
        QTest::newRow("two workers, within 3 %") << 2 << 5.9 << "serial (1 worker x 2 threads)" << "no clear gain";
        QTest::newRow("per-node threads, within 3 %")
            << 1 << 5.95 << "serial (1 worker x 2 threads)" << "no clear gain";
        QTest::newRow("per-node threads, clear gain")
            << 1 << 5.0 << "serial, per-node threads (1 worker x 2 threads, nodes on 1-2)" << "no inter-op gain";
        QTest::newRow("serial fastest") << 2 << 6.5 << "serial (1 worker x 2 threads)" << "no inter-op gain";
    }

    void choiceKeepsSerialOnATie()
    {
        QFETCH(int, fastestWorkers);
        QFETCH(double, fastestMs);
        QFETCH(QString, chosen);
        QFETCH(QString, verdictStart);
        auto candidate = [](double ms, int serialThreads) {
            pipeline::TuneCandidate c;
            c.config.serialThreads = serialThreads;
            c.measured = {ms * 1e-3, ms * 1e-3, ms * 1e-3};
            return c;
        };
        pipeline::TuneResult r;
        r.cores = 2;
        r.candidates = {candidate(10, 1), candidate(6, 2), candidate(fastestMs, 0)};
        Schedule& s = r.candidates.back().config.schedule.emplace();
        s.clusters.resize(size_t(fastestWorkers));
        if (fastestWorkers == 1) {  // per-node threads: one item on 1 thread, one on 2
            s.clusters[0] = {0, 1};
            s.owner = {0, 0};
            s.threads = {1, 2};
            s.workerThreads = {2};
        } else {
            s.clusters[0] = {0};
            s.clusters[1] = {1};
            s.owner = {0, 1};
        }
        r.candidates.back().config.settings.algorithm = "linear";
        pipeline::chooseMeasured(r, "default");
        QCOMPARE(QString::fromStdString(r.candidates[r.chosen].config.label()), chosen);
        QCOMPARE(r.candidates[r.bestSerial].config.serialThreads, 2);
        QCOMPARE(r.candidates[r.serialOneThread].config.serialThreads, 1);
        QVERIFY2(r.verdict.rfind(verdictStart.toStdString(), 0) == 0, r.verdict.c_str());
    }

    // Candidates that run alike are measured once: a per-node choice that kept every node
    // on the worker's two threads is serial on two threads; one with a node on one thread,
    // and two workers, are not.
    void duplicatesAreDropped()
    {
        auto oneWorker = [](std::vector<int32_t> threads) {
            pipeline::TuneCandidate c;
            Schedule& s = c.config.schedule.emplace();
            s.clusters = {{0, 1}};
            s.owner = {0, 0};
            s.threads = std::move(threads);
            s.workerThreads = {2};
            return c;
        };
        std::vector<pipeline::TuneCandidate> c(2);
        c[0].config.serialThreads = 1;
        c[1].config.serialThreads = 2;
        c.push_back(oneWorker({2, 2}));
        c.push_back(oneWorker({0, 2}));  // 0: the worker's count
        c.push_back(oneWorker({1, 2}));
        pipeline::TuneCandidate two;
        Schedule& s = two.config.schedule.emplace();
        s.clusters = {{0}, {1}};
        s.owner = {0, 1};
        c.push_back(two);
        pipeline::dropDuplicates(c);
        QCOMPARE(c.size(), size_t(4));
        QCOMPARE(c[1].config.serialThreads, 2);
        QCOMPARE(c[2].config.schedule->threads, (std::vector<int32_t>{1, 2}));
        QCOMPARE(c[3].config.schedule->clusters.size(), size_t(2));
    }

    void badConfigsAreUsageErrors_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << "{" << "not JSON";
        QTest::newRow("no schema") << "{\"passes\": \"none\"}" << "not a run configuration";
        QTest::newRow("no schedule") << R"({"schema": "ramiel.config/1", "passes": "none", "settings": {}})"
                                     << "needs \"serial_threads\" or a \"schedule\"";
        QTest::newRow("threads") << R"({"schema": "ramiel.config/1", "passes": "none", "settings": {}, "serial_threads": -3})"
                                 << "serial_threads";
        QTest::newRow("wrong type") << R"({"schema": "ramiel.config/1", "passes": 3, "settings": {}})"
                                    << "not a run configuration";
        QTest::newRow("bad schedule")
            << R"({"schema": "ramiel.config/1", "passes": "none", "settings": {}, "schedule": {"algorithm": 1}})"
            << "not a schedule";
    }

    void badConfigsAreUsageErrors()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string file = (dir.path() + "/c.json").toStdString();
        std::ofstream(file) << json.toStdString();
        try {
            pipeline::readRunConfig(file);
            QFAIL("accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find(file) != std::string::npos, e.what());
        }
    }

    // Four equal branches on two cores: `ramiel tune` plans them as two workers and times that
    // schedule alone beside the serial ones. Which wins is this machine's measurement at this
    // moment (a burst of other work can make serial win; the speed itself is a benchmark:
    // bench/four_branches.py, then bench/tune_check.sh), so the test asserts what tune does with
    // its measurements: the choice is the fastest measured, or a serial one within the tie
    // margin of it, and the chosen configuration computes what serial computes.
    void tuneMeasuresTheBranches()
    {
        QTemporaryDir dir;
        const QString model = dir.path() + "/four.onnx", config = dir.path() + "/tuned.json";
        std::ofstream(model.toStdString(), std::ios::binary) << fourBranchModel();
        const auto r = test::runCli({"tune", model, "-p", "2", "--budget", "12", "--passes", "default", "--json",
                                     "-o", config},
                                    300000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto report = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(report.at("schema").get<std::string>(), std::string("ramiel.tune/1"));
        QVERIFY(report.at("total_seconds").get<double>() < 12 + 8);  // the budget, and process start-up

        const pipeline::RunConfig chosen = pipeline::readRunConfig(config.toStdString());
        double fastest = std::numeric_limits<double>::infinity();
        std::vector<double> chosenMs;  // the rows that run as the chosen configuration's label says
        bool twoWorkersTimed = false;
        for (const auto& row : report.at("candidates")) {
            if (!row.contains("measured_ms"))
                continue;
            const double ms = row.at("measured_ms").get<double>();
            fastest = std::min(fastest, ms);
            twoWorkersTimed = twoWorkersTimed || row.at("threads").get<std::string>().rfind("2 workers", 0) == 0;
            if (row.at("configuration").get<std::string>() == chosen.label() &&
                row.at("passes").get<std::string>() == chosen.passes)
                chosenMs.push_back(ms);
        }
        QVERIFY2(twoWorkersTimed, report.dump(1).c_str());
        QVERIFY2(!chosenMs.empty(), chosen.label().c_str());  // the choice was timed
        const bool byTheRule = std::any_of(chosenMs.begin(), chosenMs.end(), [&](double ms) {
            return ms == fastest || (chosen.serial() && ms * (1 - pipeline::kTieMargin) <= fastest * (1 + 1e-9));
        });
        QVERIFY2(byTheRule, report.at("verdict").get<std::string>().c_str());

        pipeline::PrepareOptions o = pipeline::prepareOptionsOf(chosen, {});
        const auto prepared = pipeline::prepare(model.toStdString(), o);
        const Schedule s = pipeline::scheduleFor(chosen, *prepared, config.toStdString());
        const auto compiled = runtime().compile(prepared->model);
        compiled->setInputs(compiled->randomInputs(1, 7));
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> serial = compiled->outputs();
        compiled->parallelExecutor(s)->run();
        const std::vector<Tensor> parallel = compiled->outputs();
        QCOMPARE(parallel.size(), serial.size());
        QCOMPARE(test::relativeDifference(parallel[0], serial[0]), 0.0);
    }

    void benchAndExportTakeTheConfig()
    {
        QTemporaryDir dir;
        const QString model = dir.path() + "/four.onnx", config = dir.path() + "/serial.json";
        std::ofstream(model.toStdString(), std::ios::binary) << fourBranchModel();
        pipeline::RunConfig c;
        c.serialThreads = 2;
        c.settings.workers = 2;
        pipeline::writeRunConfig(config.toStdString(), c);
        const auto bench = test::runCli({"bench", model, "--config", config, "--runs", "3", "--json"});
        QVERIFY2(bench.exitCode == 0, qPrintable(bench.err));
        const auto j = nlohmann::json::parse(bench.out.toStdString());
        QCOMPARE(j.at("runs").size(), size_t(2));  // serial on 1 and 2 threads: the configuration is one of them
        // The timing workers read --input files: one sample of x runs; a file of another size
        // stops the worker, and bench names the file.
        auto writeX = [&](const QString& name, int64_t size) {
            Tensor t;
            t.dtype = DataType::Float;
            t.dims = {1, size};
            t.data.assign(size_t(size) * 4, '\0');
            writeNpy((dir.path() + "/" + name).toStdString(), t);
            return "x=" + dir.path() + "/" + name;
        };
        const auto onFile = test::runCli({"bench", model, "--config", config, "--runs", "3", "--input", writeX("x.npy", 16384)});
        QVERIFY2(onFile.exitCode == 0, qPrintable(onFile.err));
        const auto badFile = test::runCli({"bench", model, "--config", config, "--runs", "3", "--input", writeX("bad.npy", 100)});
        QVERIFY(badFile.exitCode != 0);
        QVERIFY2(badFile.err.contains(dir.path() + "/bad.npy: holds 1x100; input 'x' takes 1x16384"), qPrintable(badFile.err));
        const auto exported = test::runCli({"export", model, "--config", config, "--lang", "python", "-o",
                                            dir.path() + "/code"});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        QVERIFY(QFile::exists(dir.path() + "/code/run.py"));
        QVERIFY(QFile(dir.path() + "/code/run.py").open(QIODevice::ReadOnly));
    }
};

QTEST_GUILESS_MAIN(TestTune)
#include "tst_tune.moc"
