// Graph IR: building, SSA checks, topological order, levels, cycles; the
// byte and FLOP counts as text; a constant tensor's statistics.
#include "core/analysis/finite_values.h"
#include "core/analysis/grouping.h"
#include "core/analysis/host_state.h"
#include "core/analysis/tensor_stats.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/report/host_report.h"
#include "core/util/error.h"
#include "core/util/text.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace ramiel;
using ramiel::test::graphFromSpec;
using ramiel::test::OnnxBuilder;

class TestGraph : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void orderKeepsFileOrderWhenSorted()
    {
        auto s = graphFromSpec("A B C D ; A>B A>C B>D C>D");
        const Topology t = buildTopology(s.graph);
        QCOMPARE(t.order, (std::vector<NodeId>{0, 1, 2, 3}));
        QCOMPARE(t.level, (std::vector<int32_t>{0, 1, 1, 2}));
        QCOMPARE(t.edgeCount, size_t(4));
        QCOMPARE(t.depth(), 3);
        QCOMPARE(t.width(), 2);
    }

    void orderSortsUnsortedNodes()
    {
        // D is declared first but depends on everything.
        auto s = graphFromSpec("D A B ; A>B B>D A>D");
        const Topology t = buildTopology(s.graph);
        QCOMPARE(t.order, (std::vector<NodeId>{s.id["A"], s.id["B"], s.id["D"]}));
        for (NodeId v = 0; v < 3; ++v)
            for (NodeId p : t.preds[v])
                QVERIFY(t.position[p] < t.position[v]);
    }

    void predecessorsAreDistinct()
    {
        // B reads A's output twice: one edge.
        Graph g;
        const ValueId a = g.addValue("a");
        const ValueId b = g.addValue("b");
        Node na;
        na.opType = "Op";
        na.outputs = {a};
        g.addNode(na);
        Node nb;
        nb.opType = "Mul";
        nb.inputs = {a, a};
        nb.outputs = {b};
        g.addNode(nb);
        QCOMPARE(g.predecessors(1), (std::vector<NodeId>{0}));
        QCOMPARE(buildTopology(g).edgeCount, size_t(1));
        QCOMPARE(g.value(a).consumers.size(), size_t(1));
    }

    void cycleIsNamed()
    {
        auto s = graphFromSpec("A B C ; A>B B>C C>B");
        try {
            buildTopology(s.graph);
            QFAIL("a cycle must be reported");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidGraph);
            const QString msg = QString::fromStdString(e.message());
            QVERIFY2(msg.contains("cycle") && msg.contains("'B'") && msg.contains("'C'"), qPrintable(msg));
            QVERIFY2(!msg.contains("'A'"), qPrintable(msg));
        }
    }

    void secondProducerIsRefused()
    {
        Graph g;
        const ValueId v = g.addValue("v");
        Node n1;
        n1.opType = "Op";
        n1.outputs = {v};
        g.addNode(n1);
        Node n2 = n1;
        QVERIFY_THROWS_EXCEPTION(Error, g.addNode(n2));
    }

    void nodeNamesAreMadeUnique()
    {
        Graph g;
        for (int i = 0; i < 3; ++i) {
            Node n;
            n.opType = "Relu";
            n.name = "same";
            g.addNode(n);
        }
        Node unnamed;
        unnamed.opType = "Relu";
        g.addNode(unnamed);
        QCOMPARE(g.node(0).name, std::string("same"));
        QCOMPARE(g.node(1).name, std::string("same_1"));
        QCOMPARE(g.node(2).name, std::string("same_2"));
        QCOMPARE(g.node(3).name, std::string("Relu_3"));
    }

    void implicitInputsAreDependencies()
    {
        Graph g;
        const ValueId x = g.addValue("x");
        const ValueId y = g.addValue("y");
        Node p;
        p.opType = "Op";
        p.outputs = {x};
        g.addNode(p);
        Node iff;
        iff.opType = "If";
        iff.outputs = {y};
        const NodeId id = g.addNode(iff);
        g.addImplicitInput(id, x);
        QCOMPARE(g.predecessors(id), (std::vector<NodeId>{0}));
        QCOMPARE(buildTopology(g).level[id], 1);
    }

    void shapeHelpers()
    {
        Shape s({Dim::symbolic("N"), Dim::known(3), Dim::unknown()});
        QCOMPARE(s.toString(), std::string("Nx3x?"));
        QVERIFY(!s.numel());
        QCOMPARE(Shape::of({2, 3, 4}).numel().value(), int64_t(24));
        QCOMPARE(Shape::of({}).toString(), std::string("scalar"));
        // Overflow is "unknown", not a wrapped number.
        QVERIFY(!Shape::of({int64_t(1) << 40, int64_t(1) << 40}).numel());
        TensorType t{DataType::Float, Shape::of({2, 3})};
        QCOMPARE(t.byteSize().value(), int64_t(24));
        QCOMPARE(t.toString(), std::string("float[2x3]"));
    }

    // One rule for every byte count (binary) and every count or rate (decimal) the CLI,
    // Studio and the error messages print.
    void quantitiesReadWithThreeDigits_data()
    {
        QTest::addColumn<QString>("kind");  // "bytes", or the unit of formatDecimal
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("no bytes") << "bytes" << 0.0 << "0 B";
        QTest::newRow("bytes") << "bytes" << 512.0 << "512 B";
        QTest::newRow("just under a KiB") << "bytes" << 1023.0 << "1023 B";
        QTest::newRow("a KiB") << "bytes" << 1024.0 << "1.00 KiB";
        QTest::newRow("KiB") << "bytes" << 1536.0 << "1.50 KiB";
        // The Compare table's "13634.3 KiB" of cross-cluster traffic.
        QTest::newRow("MiB") << "bytes" << 13634.3 * 1024 << "13.3 MiB";
        QTest::newRow("three digits") << "bytes" << 140326.5 * 1024 << "137 MiB";
        QTest::newRow("never 1024 KiB") << "bytes" << 1024.0 * 1024 - 1 << "1.00 MiB";
        QTest::newRow("GiB") << "bytes" << 95.2 * 1024 * 1024 * 1024 << "95.2 GiB";
        QTest::newRow("2^42 bytes") << "bytes" << 4398046511104.0 << "4.00 TiB";
        QTest::newRow("unknown bytes") << "bytes" << std::nan("") << "unknown";
        QTest::newRow("FLOP") << "FLOP" << 950.0 << "950 FLOP";
        QTest::newRow("MFLOP") << "FLOP" << 1.183e8 << "118 MFLOP";
        QTest::newRow("GFLOP") << "FLOP" << 5.708e9 << "5.71 GFLOP";
        QTest::newRow("rounds up to a prefix") << "FLOP" << 999.7e6 << "1.00 GFLOP";
        QTest::newRow("rate") << "B/s" << 13.04e9 << "13.0 GB/s";
        QTest::newRow("parameters") << "" << 23.83e6 << "23.8 M";
        QTest::newRow("few parameters") << "" << 12.0 << "12";
        QTest::newRow("a fraction") << "FLOP/s" << 2.5 << "2.50 FLOP/s";
        QTest::newRow("unknown rate") << "B/s" << std::numeric_limits<double>::infinity() << "unknown";
    }

    void quantitiesReadWithThreeDigits()
    {
        QFETCH(QString, kind);
        QFETCH(double, value);
        QFETCH(QString, text);
        const std::string written = kind == "bytes" ? formatBytes(value) : formatDecimal(value, kind.toStdString());
        QCOMPARE(QString::fromStdString(written), text);
        if (kind == "FLOP")
            QCOMPARE(formatFlops(value), written);
    }

    // One rule for every time the CLI, Studio and the reports print.
    void timesReadWithThreeDigits_data()
    {
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << "0.00 us";
        QTest::newRow("round trip") << 66.04e-9 << "66.0 ns";
        QTest::newRow("just under a microsecond") << 0.9996e-6 << "1.00 us";
        QTest::newRow("node") << 850e-6 << "850 us";
        QTest::newRow("rounds up to a millisecond") << 999.96e-6 << "1.00 ms";
        QTest::newRow("run") << 12.34e-3 << "12.3 ms";
        QTest::newRow("rounds up to a second") << 0.99951 << "1.00 s";
        QTest::newRow("tune") << 2.5 << "2.50 s";
        QTest::newRow("long") << 123.4 << "123 s";
        QTest::newRow("negative") << -1.5e-3 << "-1.50 ms";
        QTest::newRow("not a number") << std::nan("") << "unknown";
        QTest::newRow("infinite") << std::numeric_limits<double>::infinity() << "unknown";
    }

    void timesReadWithThreeDigits()
    {
        QFETCH(double, seconds);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatSeconds(seconds)), text);
    }

    // The host line says when the round trip moved more than 2x (a cloud host moved its vCPUs).
    void hostLineSaysWhenTheRoundTripMoved_data()
    {
        QTest::addColumn<double>("beforeNs");
        QTest::addColumn<double>("afterNs");
        QTest::addColumn<bool>("moved");
        QTest::newRow("steady") << 64.0 << 66.0 << false;
        QTest::newRow("just under 2x") << 60.0 << 119.0 << false;
        QTest::newRow("apart") << 60.0 << 340.0 << true;
        QTest::newRow("together again") << 333.0 << 60.2 << true;
        QTest::newRow("one CPU: not measured") << -1.0 << -1.0 << false;
        QTest::newRow("after not measured") << 60.0 << -1.0 << false;
    }

    void hostLineSaysWhenTheRoundTripMoved()
    {
        QFETCH(double, beforeNs);
        QFETCH(double, afterNs);
        QFETCH(bool, moved);
        HostState before, after;
        before.cores = after.cores = 2;
        before.loadAverage = after.loadAverage = 0.5;
        before.roundTripSeconds = beforeNs * 1e-9;
        after.roundTripSeconds = afterNs * 1e-9;
        before.cpuA = after.cpuA = 0;
        before.cpuB = after.cpuB = 1;
        QCOMPARE(roundTripMoved(before, after), moved);
        QCOMPARE(hostAroundToJson(before, after)["round_trip_moved"].get<bool>(), moved);
        const std::string line = describeHostAround(before, after);
        QCOMPARE(line.find("the host moved its CPUs") != std::string::npos, moved);
    }

    // Statistics of a weight, worked out by hand.
    void tensorStatistics()
    {
        auto tensor = [](DataType dtype, std::vector<int64_t> dims, const auto& values) {
            Tensor t;
            t.dtype = dtype;
            t.dims = std::move(dims);
            t.data.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(values[0]));
            return t;
        };
        const std::vector<float> f = {1, 2, 3, 4, 0, 0, std::nanf(""), INFINITY};
        const auto s = tensorStats(tensor(DataType::Float, {2, 4}, f), 4);
        QVERIFY(s);
        QCOMPARE(s->count, int64_t(8));
        QCOMPARE(s->finite, int64_t(6));
        QCOMPARE(s->nans, int64_t(1));
        QCOMPARE(s->infinities, int64_t(1));
        QCOMPARE(s->zeros, int64_t(2));
        QCOMPARE(s->min, 0.0);
        QCOMPARE(s->max, 4.0);
        QCOMPARE(s->mean, 10.0 / 6);
        // Population variance: mean of squares 30/6 = 5 less the squared mean (10/6)^2.
        QVERIFY(std::abs(s->stddev - std::sqrt(5.0 - 100.0 / 36)) < 1e-12);
        // Bins of width 1 over [0, 4]: 0 0 | 1 | 2 | 3 4.
        QCOMPARE(s->histogram, (std::vector<int64_t>{2, 1, 1, 2}));
        // All equal: one bin.
        const auto same = tensorStats(tensor(DataType::Int64, {3}, std::vector<int64_t>{7, 7, 7}), 32);
        QCOMPARE(same->histogram, std::vector<int64_t>{3});
        QCOMPARE(same->stddev, 0.0);
        // Float16: 1.0, -2.0, 65504 (the largest), 2^-24 (the smallest subnormal).
        const auto half = tensorStats(tensor(DataType::Float16, {4}, std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff, 0x0001}));
        QCOMPARE(half->min, -2.0);
        QCOMPARE(half->max, 65504.0);
        QCOMPARE(half->mean, (1.0 - 2.0 + 65504.0 + std::ldexp(1.0, -24)) / 4);
        // No data (external, not loaded), a size that does not match, strings: nothing to count.
        Tensor external;
        external.dtype = DataType::Float;
        external.dims = {4};
        external.externalLocation = "weights.bin";
        QVERIFY(!tensorStats(external));
        QVERIFY(!tensorStats(tensor(DataType::Float, {5}, f)));
        Tensor strings;
        strings.dtype = DataType::String;
        strings.dims = {1};
        strings.data = "abcd";
        QVERIFY(!tensorStats(strings));
    }

    // Modules from node names, collapsed and nested.
    void modulesFromNames()
    {
        QCOMPARE(modulePrefixes("/features/denseblock1/denselayer2/conv1/Conv"),
                 (std::vector<std::string>{"/features/", "/features/denseblock1/", "/features/denseblock1/denselayer2/",
                                           "/features/denseblock1/denselayer2/conv1/"}));
        QCOMPARE(modulePrefixes("Conv_12"), std::vector<std::string>{});
        QCOMPARE(modulePrefixes("/fc/Gemm"), std::vector<std::string>{"/fc/"});
        QCOMPARE(modulePrefixes("/a//b/"), std::vector<std::string>{"/a/"});  // no empty module, no empty name
        const auto s = graphFromSpec("/f/b1/l1/Conv:1 /f/b1/l2/Conv:1 /f/t/Pool:1 /f/b2/l1/Conv:1 /fc/Gemm:1 x:1 ; "
                                     "/f/b1/l1/Conv>/f/b1/l2/Conv /f/b1/l2/Conv>/f/t/Pool");
        const Graph& g = s.graph;
        QCOMPARE(modulesAtDepth(g, 1), std::vector<std::string>{"/f/"});  // "/fc/" holds one node
        QCOMPARE(modulesAtDepth(g, 2), std::vector<std::string>{"/f/b1/"});
        QCOMPARE(modulesAtDepth(g, 5), std::vector<std::string>{});
        NodeGroups groups = groupByModules(g, {"/f/b1/", "/f/t/", "/nothing/"});
        QCOMPARE(groups.prefixes, (std::vector<std::string>{"/f/b1/", "/f/t/"}));
        QCOMPARE(groups.members[0], (std::vector<NodeId>{s.id.at("/f/b1/l1/Conv"), s.id.at("/f/b1/l2/Conv")}));
        QCOMPARE(groups.groupOf[size_t(s.id.at("/f/t/Pool"))], 1);
        QCOMPARE(groups.groupOf[size_t(s.id.at("/f/b2/l1/Conv"))], -1);
        QCOMPARE(groups.groupOf[size_t(s.id.at("x"))], -1);
        // Nested: the outer module holds the nodes.
        groups = groupByModules(g, {"/f/b1/", "/f/"});
        QCOMPARE(groups.prefixes, std::vector<std::string>{"/f/"});
        QCOMPARE(groups.members[0].size(), size_t(4));
        QVERIFY(groupByModules(g, {}).prefixes.empty());
    }

    void valuesFiniteWithInputs_data()
    {
        QTest::addColumn<QString>("before");    // what makes `a` from the input x
        QTest::addColumn<bool>("finiteA");      // a is finite whenever x is
        QTest::newRow("Relu") << "Relu" << true;
        QTest::newRow("division by a constant without zeros") << "Div 2" << true;
        QTest::newRow("division by a constant with a zero") << "Div 0" << false;
        QTest::newRow("division by a computed value") << "Div x" << false;
        QTest::newRow("square root") << "Sqrt" << false;
        QTest::newRow("LeakyRelu, NaN slope") << "LeakyRelu nan" << false;
        QTest::newRow("Add of a NaN constant") << "Add nan" << false;
    }

    // Which values are finite whenever the graph's inputs are: a, made from x as `before`
    // says, and c = Conv(Relu(a)), which inherits a's answer; the weights are finite.
    void valuesFiniteWithInputs()
    {
        QFETCH(QString, before);
        QFETCH(bool, finiteA);
        const QStringList words = before.split(' ');
        const float nan = std::numeric_limits<float>::quiet_NaN();
        OnnxBuilder b;
        b.input("x", {1, 2, 4, 4}).output("c", {1, 2, 4, 4});
        b.initializer("w", {2, 2, 1, 1}, 0.5f);
        if (words[0] == "Div" && words[1] != "x")
            b.initializer("d", {2, 1, 1}, [&](int64_t i) { return i == 1 ? std::stof(words[1].toStdString()) : 1.0f; });
        if (words[0] == "Add")
            b.initializer("d", {}, nan);
        if (words[0] == "Div" || words[0] == "Add")
            b.node(words[0].toStdString(), {"x", words[1] == "x" ? "x" : "d"}, {"a"});
        else if (words[0] == "LeakyRelu")
            OnnxBuilder::setFloat(b.node("LeakyRelu", {"x"}, {"a"}), "alpha", nan);
        else
            b.node(words[0].toStdString(), {"x"}, {"a"});
        b.node("Relu", {"a"}, {"r"});
        b.node("Conv", {"r", "w"}, {"c"});
        // Constants of more than one block of numbers (the check's 4096), one with an infinity late.
        b.initializer("big", {9600}, [](int64_t i) { return i == 9000 ? std::numeric_limits<float>::infinity() : 1.0f; });
        b.initializer("big2", {9600}, 1.0f);
        const Model m = loadOnnxFromBytes(b.bytes(), "finite.onnx", {});
        const Graph& g = m.graph;
        const std::vector<bool> finite = finiteWithInputs(g);
        auto valueNamed = [&](const std::string& name) {
            for (const Value& v : g.values())
                if (v.name == name)
                    return size_t(v.id);
            return size_t(-1);
        };
        QVERIFY(finite[valueNamed("x")] && finite[valueNamed("w")] && finite[valueNamed("big2")]);
        QVERIFY(!finite[valueNamed("big")]);
        QCOMPARE(bool(finite[valueNamed("a")]), finiteA);
        QCOMPARE(bool(finite[valueNamed("c")]), finiteA);
        if (words[0] == "Add")
            QVERIFY(!finite[valueNamed("d")]);  // the NaN constant
    }
};

QTEST_APPLESS_MAIN(TestGraph)
#include "tst_graph.moc"
