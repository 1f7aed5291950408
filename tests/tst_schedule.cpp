// Scheduling on hand-made graphs whose answers are worked out by hand, on
// every torchvision export for every scheduler and configuration, and on
// random DAGs (property tests).
#include "core/analysis/cost_model.h"
#include "core/ir/synthetic.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/scheduler.h"
#include "core/schedule/thread_choice.h"
#include "core/util/error.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <memory>

using namespace ramiel;
using ramiel::test::graphFromSpec;

namespace {

// A hand-made graph with explicit costs (seconds per sample) and a fixed
// cross-cluster latency.
struct HandMade {
    test::SpecGraph spec;
    Topology topo;
    std::unique_ptr<CostTable> costs;

    HandMade(const std::string& text, double latency)
        : spec(graphFromSpec(text)), topo(buildTopology(spec.graph))
    {
        EdgeCostParameters e;
        e.latencySeconds = latency;
        costs = std::make_unique<CostTable>(CostTable::fromSeconds(topo, spec.cost, e));
    }

    SchedulingProblem problem(int workers, int batch = 1, int degree = 1, bool clone = true) const
    {
        SchedulingProblem p = SchedulingProblem::of(spec.graph, topo, *costs, workers, batch, degree);
        p.clone = clone;
        return p;
    }

    // Makes `node` read a graph input (so it and what follows depend on one).
    void feedGraphInput(const std::string& node)
    {
        const ValueId x = spec.graph.addValue("x");
        spec.graph.addInput(x);
        spec.graph.node(spec.id.at(node)).inputs.push_back(x);
    }

    // The cluster (index) that owns a node of copy 0.
    int clusterOf(const Plan& plan, const std::string& node) const
    {
        return plan.schedule.owner[size_t(spec.id.at(node))];
    }
};

void checkValid(const Plan& plan, const char* where)
{
    QVERIFY2(plan.validation.valid,
             qPrintable(QString("%1: %2").arg(where, plan.validation.problems.empty()
                                                         ? QString()
                                                         : QString::fromStdString(plan.validation.problems[0]))));
}

// Makespans are sums of the same costs in possibly different orders.
bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-15; }

}  // namespace

class TestSchedule : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void chainIsOneCluster()
    {
        HandMade h("A:1 B:2 C:3 ; A>B B>C", 0.5);
        const Plan plan = planSchedule(h.problem(4), "linear");
        checkValid(plan, "chain");
        QCOMPARE(plan.schedule.clusters.size(), size_t(1));
        QCOMPARE(plan.simulation.makespan, 6.0);
        QVERIFY(plan.crossEdges.empty());
    }

    void forkJoin_data()
    {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("workers");
        for (int k : {2, 3, 5})
            for (int p : {k, k + 2})
                QTest::newRow(qPrintable(QString("k=%1 P=%2").arg(k).arg(p))) << k << p;
    }

    // k equal branches with P >= k: k clusters, makespan = fork + one branch + join.
    void forkJoin()
    {
        QFETCH(int, k);
        QFETCH(int, workers);
        std::string spec = "F:1 J:1", edges;
        for (int i = 0; i < k; ++i) {
            spec += " b" + std::to_string(i) + ":2";
            edges += " F>b" + std::to_string(i) + " b" + std::to_string(i) + ">J";
        }
        HandMade h(spec + " ;" + edges, 0.0);
        const Plan plan = planSchedule(h.problem(workers), "linear");
        checkValid(plan, "fork-join");
        QCOMPARE(int(plan.schedule.clusters.size()), k);
        QCOMPARE(plan.simulation.makespan, 4.0);
        for (int i = 0; i < k; ++i)
            for (int j = i + 1; j < k; ++j)
                QVERIFY(h.clusterOf(plan, "b" + std::to_string(i)) != h.clusterOf(plan, "b" + std::to_string(j)));
    }

    // Diamond, hand-off 0.5: A-B-D is the first linear cluster, C the second.
    // C ends at 1 + 0.5 + 2 = 3.5 and reaches D at 4 < 6, when B ends: makespan 7.
    void diamondUnequalBranches()
    {
        HandMade h("A:1 B:5 C:2 D:1 ; A>B A>C B>D C>D", 0.5);
        const Plan plan = planSchedule(h.problem(2, 1, 1, false), "linear");
        checkValid(plan, "diamond");
        QCOMPARE(plan.schedule.clusters.size(), size_t(2));
        QCOMPARE(h.clusterOf(plan, "A"), h.clusterOf(plan, "B"));
        QCOMPARE(h.clusterOf(plan, "B"), h.clusterOf(plan, "D"));
        QVERIFY(h.clusterOf(plan, "C") != h.clusterOf(plan, "A"));
        QCOMPARE(plan.simulation.makespan, 7.0);
        QCOMPARE(plan.simulation.serial, 9.0);
        QCOMPARE(int(plan.crossEdges.size()), 2);
        // One worker: everything in one cluster, the serial time.
        const Plan one = planSchedule(h.problem(1), "linear");
        QCOMPARE(one.schedule.clusters.size(), size_t(1));
        QCOMPARE(one.simulation.makespan, 9.0);
    }

    void independentChains()
    {
        HandMade h("X1:1 X2:1 Y1:1 Y2:1 Y3:1 ; X1>X2 Y1>Y2 Y2>Y3", 0.5);
        const Plan plan = planSchedule(h.problem(2), "linear");
        checkValid(plan, "chains");
        QCOMPARE(plan.schedule.clusters.size(), size_t(2));
        QCOMPARE(plan.simulation.makespan, 3.0);
        QVERIFY(plan.crossEdges.empty());
        QCOMPARE(h.clusterOf(plan, "X1"), h.clusterOf(plan, "X2"));
        QCOMPARE(h.clusterOf(plan, "Y1"), h.clusterOf(plan, "Y3"));
    }

    // A cheap source S feeds three branches (hand-off 1 > its cost 0.1). The
    // first linear cluster is S-A-J; cloning S into B's and C's clusters removes
    // exactly the two cross edges S->B and S->C, and B ends at 5.1 instead of 6.1.
    void cloningCheapFanOut()
    {
        HandMade h("S:0.1 A:5 B:5 C:5 J:1 ; S>A S>B S>C A>J B>J C>J", 1.0);
        const Plan without = planSchedule(h.problem(3, 1, 1, false), "linear");
        checkValid(without, "no clone");
        QCOMPARE(int(without.crossEdges.size()), 4);  // S->B, S->C, B->J, C->J
        QCOMPARE(without.simulation.makespan, 0.1 + 1 + 5 + 1 + 1);

        const Plan with = planSchedule(h.problem(3), "linear");
        checkValid(with, "clone");
        QCOMPARE(with.clones.clones, 2);
        QCOMPARE(with.clones.crossEdgesRemoved(), 2);
        QCOMPARE(int(with.crossEdges.size()), 2);
        for (const CrossEdge& e : with.crossEdges)
            QCOMPARE(h.spec.graph.node(with.schedule.node(e.to)).name, std::string("J"));
        QCOMPARE(with.validation.clones, size_t(2));
        QCOMPARE(with.simulation.makespan, 0.1 + 5 + 1 + 1);
    }

    // B = 4, d = 4, P = 2: each copy is a heavy branch (F-H-J, 5) and a light
    // one (L, 1). Without switching every copy's heavy cluster lands on worker
    // 0 (20 s of work there); switching alternates them.
    void hyperclusterSwitching()
    {
        HandMade h("F:1 H:3 L:1 J:1 ; F>H F>L H>J L>J", 0.0);
        SchedulingProblem p = h.problem(2, 4, 4, false);
        p.switching = false;
        const Plan plain = planSchedule(p, "linear");
        checkValid(plain, "no switching");
        p.switching = true;
        const Plan switched = planSchedule(p, "linear");
        checkValid(switched, "switching");
        QCOMPARE(plain.simulation.makespan, 20.0);
        QVERIFY2(switched.simulation.makespan < plain.simulation.makespan,
                 qPrintable(QString::number(switched.simulation.makespan)));
        QCOMPARE(switched.simulation.makespan, 12.0);
        // Each node instance knows its sub-batch.
        QCOMPARE(switched.schedule.subBatch, (std::vector<int>{1, 1, 1, 1}));
    }

    void subBatchesSplitTheBatch()
    {
        HandMade h("A:1", 0);
        QCOMPARE(h.problem(2, 8, 3).subBatches(), (std::vector<int>{3, 3, 2}));
        QCOMPARE(h.problem(2, 4, 1).subBatches(), (std::vector<int>{4}));
        QVERIFY_THROWS_EXCEPTION(Error, h.problem(2, 4, 5).check());
        QVERIFY_THROWS_EXCEPTION(Error, h.problem(0).check());
        QVERIFY_THROWS_EXCEPTION(Error, planSchedule(h.problem(2), "nope"));
    }

    // A diamond between two chains: A, D and E are cuts (every other node is
    // before or after them), B and C are not.
    void cutNodesOfADiamond()
    {
        HandMade h("A:1 B:1 C:1 D:1 E:1 ; A>B A>C B>D C>D D>E", 0.0);
        const std::vector<char> all(h.topo.nodeCount(), 1);
        const std::vector<char> cut = cutNodes(h.topo, all);
        QCOMPARE(int(cut.size()), 5);
        for (const char* n : {"A", "D", "E"})
            QVERIFY2(cut[size_t(h.spec.id.at(n))], n);
        for (const char* n : {"B", "C"})
            QVERIFY2(!cut[size_t(h.spec.id.at(n))], n);
        // Nodes computed from constants alone do not count: only A reads the graph input.
        h.feedGraphInput("A");
        const std::vector<char> dependent = inputDependentNodes(h.spec.graph, h.topo);
        QCOMPARE(int(std::count(dependent.begin(), dependent.end(), 1)), 5);
    }

    // Worked by hand, no hand-off cost; the cuts twice as fast on 2 threads, B
    // and C not at all. Inter-op alone: A 4, B || C 2, D 4, E 4 = 14. The hybrid
    // runs A, D, E on 2 threads (2 + 2 + 2) and keeps B || C (2, against 4 on one
    // worker): 8. Without costs on 2 threads it changes nothing and says why.
    void hybridGivesCutsTheCores()
    {
        HandMade h("A:4 B:2 C:2 D:4 E:4 ; A>B A>C B>D C>D D>E", 0.0);
        h.feedGraphInput("A");
        SchedulingProblem p = h.problem(2, 1, 1, false);
        p.hybridThreads = 2;
        const Plan without = planSchedule(p, "linear");
        QCOMPARE(without.simulation.makespan, 14.0);
        QVERIFY(!without.hybrid.applied());
        QVERIFY(!without.hybrid.skipped.empty());

        h.costs->setThreadedSeconds(2, {2, 2, 2, 2, 2}, 1);
        const Plan plan = planSchedule(p, "linear");
        checkValid(plan, "hybrid");
        QVERIFY(plan.hybrid.applied());
        QCOMPARE(plan.simulation.makespan, 8.0);
        QCOMPARE(plan.hybrid.makespanBefore, 14.0);
        QCOMPARE(plan.hybrid.cuts, 3);
        for (const char* n : {"A", "D", "E"})
            QCOMPARE(plan.schedule.threadsOf(h.spec.id.at(n)), 2);
        QVERIFY(h.clusterOf(plan, "B") != h.clusterOf(plan, "C"));
        QVERIFY(!plan.hybrid.oneWorker);

        // B and C also twice as fast: one worker does B then C in 2, as fast as side by
        // side, and inter-op must win by 5 %: everything on one worker.
        h.costs->setThreadedSeconds(2, {2, 1, 1, 2, 2}, 1);
        const Plan tie = planSchedule(p, "linear");
        checkValid(tie, "hybrid, tie");
        QVERIFY(tie.hybrid.oneWorker);
        QCOMPARE(tie.simulation.makespan, 8.0);
        QCOMPARE(tie.schedule.clusters.size(), size_t(1));

        // B and C twice as fast on 2 threads too, and C costly: the stretch moves onto one
        // worker (1 + 1.5 = 2.5 < 3 side by side).
        HandMade u("A:4 B:2 C:3 D:4 E:4 ; A>B A>C B>D C>D D>E", 0.0);
        u.feedGraphInput("A");
        u.costs->setThreadedSeconds(2, {2, 1, 1.5, 2, 2}, 1);
        SchedulingProblem q = u.problem(2, 1, 1, false);
        q.hybridThreads = 2;
        const Plan moved = planSchedule(q, "linear");
        checkValid(moved, "hybrid, stretch moved");
        QCOMPARE(moved.simulation.makespan, 8.5);
        QCOMPARE(moved.hybrid.stretchesMoved, 1);
        QCOMPARE(u.clusterOf(moved, "B"), u.clusterOf(moved, "C"));

        // Copies of a hyperclustered graph are never serial: no hybrid.
        SchedulingProblem copies = u.problem(2, 2, 2, false);
        copies.hybridThreads = 2;
        const Plan hyper = planSchedule(copies, "linear");
        QVERIFY(!hyper.hybrid.applied());
        QVERIFY(hyper.schedule.threads.empty());
    }

    // Worked by hand, no hand-off cost. After A, branch B1 -> B2 (2 + 6) runs beside
    // C (2); everything scales 1.67x on 2 threads except C. Inter-op alone: 4 + 8 + 4
    // + 4 = 20. Moving the stretch onto one worker on 2 threads: 2.4 + 1.2 + 3.6 + 2
    // + 2.4 + 2.4 = 14. Dividing the cores instead: A, D, E alone on 2 threads; B1 and
    // C side by side on one each (2); then B2 alone takes both (3.6): 2.4 + 2 + 3.6 +
    // 2.4 + 2.4 = 12.8.
    void hybridDividesTheCores()
    {
        HandMade h("A:4 B1:2 B2:6 C:2 D:4 E:4 ; A>B1 B1>B2 A>C B2>D C>D D>E", 0.0);
        h.feedGraphInput("A");
        h.costs->setThreadedSeconds(2, {2.4, 1.2, 3.6, 2, 2.4, 2.4}, 1);
        SchedulingProblem p = h.problem(2, 1, 1, false);
        p.hybridThreads = 2;
        const Plan plan = planSchedule(p, "linear");
        checkValid(plan, "hybrid, cores divided");
        QCOMPARE(plan.hybrid.makespanBefore, 20.0);
        QVERIFY(std::abs(plan.simulation.makespan - 12.8) < 1e-9);
        QVERIFY(plan.hybrid.splitInstances > 0);
        QCOMPARE(plan.hybrid.stretchesMoved, 0);
        QVERIFY(!plan.hybrid.oneWorker);
        QVERIFY(h.clusterOf(plan, "B1") != h.clusterOf(plan, "C"));
        for (const char* n : {"A", "B2", "D", "E"})
            QVERIFY2(plan.schedule.threadsOf(h.spec.id.at(n)) == 2, n);
        for (const char* n : {"B1", "C"})
            QVERIFY2(plan.schedule.threadsOf(h.spec.id.at(n)) == 1, n);
        QCOMPARE(plan.schedule.cores(), 2);
        // At every moment of the simulation the running items hold at most 2 threads.
        const Simulation sim = simulate(plan.schedule, *h.costs, true);
        for (const GanttEntry& at : sim.gantt) {
            int held = 0;
            for (const GanttEntry& g : sim.gantt)
                if (g.start <= at.start && at.start < g.end)
                    held += plan.schedule.threadsOf(size_t(g.worker), g.instance);
            QVERIFY2(held <= 2, qPrintable(QString("%1 threads at %2").arg(held).arg(at.start)));
        }
    }

    // Chain A -> B -> C on one worker that starts on 2 threads; on 1 and 2 threads A and
    // C cost 4 and 2, B 1 and 1.2. A change of count costs the hand-off latency (no
    // edge bytes here): B goes to one thread only when that saves more than two switches.
    void threadSwitchesAreCosted_data()
    {
        QTest::addColumn<double>("latency");
        QTest::addColumn<int>("mostForB");
        QTest::addColumn<QVector<int>>("chosen");
        QTest::addColumn<double>("makespan");
        QTest::newRow("switches free") << 0.0 << 2 << QVector<int>{2, 1, 2} << 5.0;
        QTest::newRow("switches dearer than the gain") << 0.5 << 2 << QVector<int>{2, 2, 2} << 5.2;
        QTest::newRow("B kept to one thread") << 0.5 << 1 << QVector<int>{2, 1, 2} << 6.0;
    }
    void threadSwitchesAreCosted()
    {
        QFETCH(double, latency);
        QFETCH(int, mostForB);
        QFETCH(QVector<int>, chosen);
        QFETCH(double, makespan);
        HandMade h("A:4 B:1 C:4 ; A>B B>C", latency);
        h.costs->setThreadedSeconds(2, {2, 1.2, 2}, 1);
        const auto id = [&](const char* n) { return h.spec.id.at(n); };
        const std::vector<int> got =
            chooseThreads({{id("A"), 1, 2}, {id("B"), 1, mostForB}, {id("C"), 1, 2}}, *h.costs, 2);
        QCOMPARE(QVector<int>(got.begin(), got.end()), chosen);

        Plan plan = planSchedule(h.problem(1), "serial");
        plan.schedule.workerThreads = {2};
        plan.schedule.threads.assign(3, 0);
        const char* names[] = {"A", "B", "C"};
        for (size_t k = 0; k < 3; ++k)
            plan.schedule.threads[size_t(id(names[k]))] = got[k];
        QVERIFY(close(simulate(plan.schedule, *h.costs).makespan, makespan));
    }

    // A division that does not simulate faster leaves the schedule as it was.
    void splitCoresKeepsAFasterPlanOnly()
    {
        // Two equal branches on two cores: nothing to divide, the schedule stays.
        HandMade h("A:4 B:2 C:2 D:4 ; A>B A>C B>D C>D", 0.0);
        h.feedGraphInput("A");
        h.costs->setThreadedSeconds(2, {4, 2, 2, 4}, 1);  // nothing scales
        SchedulingProblem p = h.problem(2, 1, 1, false);
        Plan plan = planSchedule(p, "linear");
        const Schedule before = plan.schedule;
        QCOMPARE(splitCores(plan.schedule, h.spec.graph, *h.costs, 2), 0);
        QCOMPARE(plan.schedule.threads, before.threads);
    }

    void validatorCatchesBrokenSchedules()
    {
        HandMade h("A:1 B:1 C:1 ; A>B B>C", 0);
        Plan plan = planSchedule(h.problem(2), "serial");
        QVERIFY(plan.validation.valid);
        Schedule bad = plan.schedule;
        std::swap(bad.clusters[0][0], bad.clusters[0][1]);  // B before A
        QVERIFY(!validate(bad, h.topo).valid);
        bad = plan.schedule;
        bad.clusters[0].pop_back();  // C scheduled nowhere
        QVERIFY(!validate(bad, h.topo).valid);
        bad = plan.schedule;
        bad.clusters.push_back({bad.clusters[0][2]});  // C twice, as a clone: allowed
        QVERIFY(validate(bad, h.topo).valid);
        QCOMPARE(validate(bad, h.topo).clones, size_t(1));
        bad.rank[0] = 2;  // rank is no longer a permutation / topological
        QVERIFY(!validate(bad, h.topo).valid);
    }

    void torchvision_data() { test::addTorchvisionRows(); }

    // Every scheduler, P in {1, 2, 4, 8, 16}, batch 1 and batch 8 with d in
    // {1, 2, 4, 8}: valid, never below the lower bounds; P = 1 is serial.
    void torchvision()
    {
        QFETCH(QString, name);
        const Model m = loadOnnx(test::modelPath(name).toStdString());
        const Topology topo = buildTopology(m.graph);
        const CostTable costs =
            CostTable::fromStatic(m.graph, topo, estimateCosts(m.graph), MachineConstants{}, EdgeCostParameters{});
        SchedulingProblem p = SchedulingProblem::of(m.graph, topo, costs, 1);
        const std::vector<std::pair<int, int>> batches = {{1, 1}, {8, 1}, {8, 2}, {8, 4}, {8, 8}};
        int plans = 0;
        double slowest = 0;
        for (const auto& [batch, degree] : batches) {
            p.batch = batch;
            p.degree = degree;
            p.workers = 1;
            const double serial = planSchedule(p, "serial").simulation.makespan;
            for (int workers : {1, 2, 4, 8, 16}) {
                p.workers = workers;
                for (const SchedulerInfo& info : schedulers()) {
                    const Plan plan = planSchedule(p, info.name);
                    ++plans;
                    slowest = std::max(slowest, plan.planningSeconds);
                    const QString where = QString("%1 P=%2 B=%3 d=%4").arg(QString::fromStdString(info.name)).arg(workers).arg(batch).arg(degree);
                    checkValid(plan, qPrintable(where));
                    QVERIFY2(int(plan.schedule.clusters.size()) <= workers, qPrintable(where));
                    QVERIFY2(plan.simulation.makespan >= plan.span * (1 - 1e-9), qPrintable(where));
                    QVERIFY2(plan.simulation.makespan >= plan.work / workers * (1 - 1e-9), qPrintable(where));
                    if (workers == 1)
                        QVERIFY2(close(plan.simulation.makespan, serial), qPrintable(where));
                }
            }
        }
        qInfo("%s: %d plans, all valid; slowest planning %.1f ms", qPrintable(name), plans, slowest * 1e3);
    }

    // Seeded random DAGs up to 2,000 nodes: every scheduler's schedule is valid
    // and its makespan is never below T-inf nor below T1 / P.
    void randomDags()
    {
        int graphs = 0;
        for (uint64_t seed = 1; seed <= 240; ++seed) {
            const int nodes = seed % 40 == 0 ? 2000 : seed % 8 == 0 ? 400 : int(5 + seed % 60);
            const SyntheticDag d = randomDag(nodes, seed, 2 + int(seed % 12), 1 + int(seed % 4));
            const Topology topo = buildTopology(d.graph);
            EdgeCostParameters e;
            e.latencySeconds = seed % 3 == 0 ? 0.0 : 20e-6;
            const CostTable costs = CostTable::fromSeconds(topo, d.seconds, e, 4096);
            const int batch = 1 + int(seed % 4);
            SchedulingProblem p = SchedulingProblem::of(d.graph, topo, costs, 1 + int(seed % 8), batch,
                                                        1 + int(seed % uint64_t(batch)));
            p.clone = seed % 2 == 0;
            for (const SchedulerInfo& info : schedulers()) {
                if (nodes >= 2000 && info.name == "dsc" && p.degree > 1)
                    continue;  // keeps the suite quick; DSC is covered on the other graphs
                const Plan plan = planSchedule(p, info.name);
                const QString where = QString("seed %1 (%2 nodes) %3").arg(seed).arg(nodes).arg(QString::fromStdString(info.name));
                checkValid(plan, qPrintable(where));
                QVERIFY2(plan.simulation.makespan >= plan.span * (1 - 1e-9), qPrintable(where));
                QVERIFY2(plan.simulation.makespan >= plan.work / p.workers * (1 - 1e-9), qPrintable(where));
            }
            ++graphs;
        }
        qInfo("%d random DAGs, every scheduler valid and within the bounds", graphs);
    }
};

QTEST_GUILESS_MAIN(TestSchedule)
#include "tst_schedule.moc"
