// Metrics on hand-made graphs whose answers are worked out by hand.
#include "core/analysis/metrics.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>

using namespace ramiel;
using ramiel::test::graphFromSpec;
using ramiel::test::nodeNames;

class TestMetrics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void metrics_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<int>("edges");
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("width");
        QTest::addColumn<double>("work");
        QTest::addColumn<double>("span");
        QTest::addColumn<QStringList>("criticalPath");

        // A chain: everything is on the critical path.
        QTest::newRow("chain") << "A:1 B:2 C:3 ; A>B B>C" << 2 << 3 << 1 << 6.0 << 6.0
                               << QStringList{"A", "B", "C"};
        // A diamond with unequal branches: the heavier branch B is critical.
        QTest::newRow("diamond") << "A:1 B:5 C:2 D:1 ; A>B A>C B>D C>D" << 4 << 3 << 2 << 9.0 << 7.0
                                 << QStringList{"A", "B", "D"};
        // The lighter branch declared first does not change the answer.
        QTest::newRow("diamond-reordered") << "A:1 C:2 B:5 D:1 ; A>B A>C B>D C>D" << 4 << 3 << 2 << 9.0 << 7.0
                                           << QStringList{"A", "B", "D"};
        // Fork-join of k equal branches: span = fork + one branch + join; ties go to the first branch.
        for (int k : {2, 3, 8}) {
            QString spec = "F:1 J:1";
            QString edges;
            for (int i = 0; i < k; ++i) {
                spec += QString(" b%1:2").arg(i);
                edges += QString(" F>b%1 b%1>J").arg(i);
            }
            QTest::newRow(qPrintable(QString("fork-join-%1").arg(k)))
                << spec + " ;" + edges << 2 * k << 3 << k << 2.0 * k + 2 << 4.0 << QStringList{"F", "b0", "J"};
        }
        // Two independent chains: the longer one is critical.
        QTest::newRow("two-chains") << "X1:1 X2:1 Y1:1 Y2:1 Y3:1 ; X1>X2 Y1>Y2 Y2>Y3" << 3 << 3 << 2 << 5.0 << 3.0
                                    << QStringList{"Y1", "Y2", "Y3"};
        // A single node.
        QTest::newRow("single") << "A:4" << 0 << 1 << 1 << 4.0 << 4.0 << QStringList{"A"};
        // A long skip edge: A>D directly and through B, C.
        QTest::newRow("skip") << "A:1 B:1 C:1 D:1 ; A>B B>C C>D A>D" << 4 << 4 << 1 << 4.0 << 4.0
                              << QStringList{"A", "B", "C", "D"};
    }

    void metrics()
    {
        QFETCH(QString, spec);
        QFETCH(int, edges);
        QFETCH(int, depth);
        QFETCH(int, width);
        QFETCH(double, work);
        QFETCH(double, span);
        QFETCH(QStringList, criticalPath);

        auto s = graphFromSpec(spec.toStdString());
        const Topology topo = buildTopology(s.graph);
        const GraphMetrics m = computeMetrics(s.graph, topo, {}, s.cost);
        QCOMPARE(m.nodes, s.graph.nodeCount());
        QCOMPARE(int(m.edges), edges);
        QCOMPARE(m.depth, depth);
        QCOMPARE(m.width, width);
        QCOMPARE(m.work, work);
        QCOMPARE(m.span, span);
        QCOMPARE(nodeNames(s.graph, m.criticalPath), criticalPath);
        QVERIFY(m.parallelism);
        QCOMPARE(*m.parallelism, work / span);
        // Every node: t-level + b-level <= span, with equality on the critical path.
        for (NodeId v = 0; v < NodeId(s.graph.nodeCount()); ++v)
            QVERIFY(m.distances.tlevel[v] + m.distances.blevel[v] <= span + 1e-12);
        for (NodeId v : m.criticalPath)
            QCOMPARE(m.distances.tlevel[v] + m.distances.blevel[v], span);
    }

    void edgeCostsLengthenThePath()
    {
        // Diamond with edge cost 10 on B>D: the path through C becomes critical.
        auto s = graphFromSpec("A:1 B:5 C:2 D:1 ; A>B A>C B>D C>D");
        const Topology topo = buildTopology(s.graph);
        const NodeId b = s.id["B"], d = s.id["D"];
        const Distances dist = computeDistances(topo, s.cost, [&](NodeId from, NodeId to) {
            return from == b && to == d ? 10.0 : 0.0;
        });
        QCOMPARE(dist.span, 17.0);
        QCOMPARE(nodeNames(s.graph, dist.criticalPath), (QStringList{"A", "B", "D"}));
        QCOMPARE(dist.tlevel[d], 16.0);
        QCOMPARE(dist.blevel[s.id["A"]], 17.0);
    }

    void unknownCostsAreReported()
    {
        auto s = graphFromSpec("A:1 B:2 C:3 ; A>B B>C");
        s.cost[1] = std::nan("");
        const GraphMetrics m = computeMetrics(s.graph, buildTopology(s.graph), {}, s.cost);
        QVERIFY(!m.costsComplete());
        QCOMPARE(nodeNames(s.graph, m.unknownCostNodes), QStringList{"B"});
        QVERIFY(!m.parallelism);  // no invented number
        QCOMPARE(m.work, 4.0);    // a lower bound
    }

    void opHistogramCountsEveryNode()
    {
        auto s = graphFromSpec("A B C");
        const GraphMetrics m = computeMetrics(s.graph, buildTopology(s.graph), {}, s.cost);
        QCOMPARE(m.opHistogram.at("Op"), size_t(3));
    }
};

QTEST_APPLESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
