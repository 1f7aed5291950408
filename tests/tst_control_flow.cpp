// If, Loop and Scan in the runtime: bodies that read outer values, loops ended by
// their trip count or their condition, loop-carried values and scan outputs, Scan's
// axes and directions, nested bodies; serial and parallel runs give the same
// values; the static cost model leaves data-dependent control flow unknown.
#include "core/analysis/cost_model.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/schedule/cost_table.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <functional>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

template <typename T>
Tensor tensorOf(DataType type, std::vector<int64_t> dims, const std::vector<T>& values)
{
    Tensor t;
    t.dtype = type;
    t.dims = std::move(dims);
    t.data.resize(values.size() * sizeof(T));
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
}
Tensor floats(std::vector<int64_t> dims, const std::vector<float>& v) { return tensorOf(DataType::Float, std::move(dims), v); }
Tensor boolean(bool b) { return tensorOf(DataType::Bool, {}, std::vector<uint8_t>{uint8_t(b)}); }

std::vector<float> valuesOf(const Tensor& t)
{
    std::vector<float> v(size_t(t.numel()));
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = t.at<float>(int64_t(i));
    return v;
}

float relu(float x) { return x > 0 ? x : 0; }
float sigmoid(float x) { return 1 / (1 + std::exp(-x)); }

const std::vector<float> kX = {-1.5f, 0.5f, 2.0f, 3.0f, -0.25f, 1.0f};

// x[2,3], c (a scalar unless `condition` gives other sizes): y = If(c) then -Relu(x) else ReduceSum(|x|) (a scalar: the
// branches' shapes differ); z = Sigmoid(x) beside it.
OnnxBuilder ifModel(std::vector<int64_t> condition = {})
{
    OnnxBuilder b(13);
    b.input("x", {2, 3}).input("c", std::move(condition), onnx::TensorProto::BOOL).output("y").output("z", {2, 3});
    b.node("Relu", {"x"}, {"r"}, "relu");
    b.node("Abs", {"x"}, {"w"}, "abs");
    b.node("Sigmoid", {"x"}, {"z"}, "sigmoid");
    auto& iff = b.node("If", {"c"}, {"y"}, "if");
    OnnxBuilder then(13), otherwise(13);
    then.output("t");
    then.node("Neg", {"r"}, {"t"}, "neg");
    otherwise.output("e");
    otherwise.node("ReduceSum", {"w"}, {"e"}, "sum");
    OnnxBuilder::setInt(otherwise.model().mutable_graph()->mutable_node(0)[0], "keepdims", 0);
    OnnxBuilder::setGraph(iff, "then_branch", then);
    OnnxBuilder::setGraph(iff, "else_branch", otherwise);
    return b;
}

// x[3]: a = Relu(x); Loop(M = 5, cond) carrying acc = x, acc += a each turn, the
// body's condition iteration < 2 (3 turns when the cond input is given, all 5
// when it is left out), and acc after each turn as a scan output.
OnnxBuilder loopModel(bool withCondition)
{
    OnnxBuilder b(13);
    b.input("x", {3}).input("c", {}, onnx::TensorProto::BOOL).output("final", {3});
    b.output("turns", withCondition ? std::vector<int64_t>{-1, 3} : std::vector<int64_t>{5, 3});
    b.initializerInt64("M", {5});
    b.node("Relu", {"x"}, {"a"}, "relu");
    b.node("Identity", {"c"}, {"c2"}, "cond");
    auto& loop = b.node("Loop", {"M", withCondition ? "c2" : "", "x"}, {"final", "turns"}, "loop");
    OnnxBuilder body(13);
    body.input("i", {}, onnx::TensorProto::INT64).input("cin", {}, onnx::TensorProto::BOOL).input("acc", {3});
    body.initializerInt64("limit", {2});
    body.output("cout", {}, onnx::TensorProto::BOOL).output("acc2", {3}).output("row", {3});
    body.node("Add", {"acc", "a"}, {"acc2"}, "add");
    body.node("Less", {"i", "limit"}, {"less"}, "less");
    body.node("Squeeze", {"less"}, {"cout"}, "squeeze");
    body.node("Identity", {"acc2"}, {"row"}, "row");
    OnnxBuilder::setGraph(loop, "body", body);
    return b;
}

// Loop(M = 3, cond) whose body holds an If reading the body's acc and the main
// graph's a (two scopes out): acc += a each turn while the condition holds.
OnnxBuilder nestedModel()
{
    OnnxBuilder b(13);
    b.input("x", {3}).input("c", {}, onnx::TensorProto::BOOL).output("final", {3});
    b.initializerInt64("M", {3});
    b.node("Relu", {"x"}, {"a"}, "relu");
    auto& loop = b.node("Loop", {"M", "c", "x"}, {"final"}, "loop");
    OnnxBuilder body(13);
    body.input("i", {}, onnx::TensorProto::INT64).input("cin", {}, onnx::TensorProto::BOOL).input("acc", {3});
    body.output("cout", {}, onnx::TensorProto::BOOL).output("next", {3});
    body.node("Identity", {"cin"}, {"cout"}, "keep");
    auto& iff = body.node("If", {"cin"}, {"next"}, "if");
    OnnxBuilder then(13), otherwise(13);
    then.output("t", {3});
    then.node("Add", {"acc", "a"}, {"t"}, "add");
    otherwise.output("e", {3});
    otherwise.node("Identity", {"acc"}, {"e"}, "same");
    OnnxBuilder::setGraph(iff, "then_branch", then);
    OnnxBuilder::setGraph(iff, "else_branch", otherwise);
    OnnxBuilder::setGraph(loop, "body", body);
    return b;
}

// s0[2], xs[2,4]: Scan along xs's axis 1 from the back; the state sums the
// columns, the scan output xs[:, t] * Sigmoid(s0) goes back to front along the
// last axis (so it lands where it came from: xs * Sigmoid(s0)[:, None]).
OnnxBuilder scanModel()
{
    OnnxBuilder b(11);
    b.input("s0", {2}).input("xs", {2, 4}).output("s", {2}).output("ys", {2, 4});
    b.node("Sigmoid", {"s0"}, {"w"}, "sigmoid");
    auto& scan = b.node("Scan", {"s0", "xs"}, {"s", "ys"}, "scan");
    OnnxBuilder::setInt(scan, "num_scan_inputs", 1);
    OnnxBuilder::setInts(scan, "scan_input_axes", {1});
    OnnxBuilder::setInts(scan, "scan_input_directions", {1});
    OnnxBuilder::setInts(scan, "scan_output_axes", {-1});
    OnnxBuilder::setInts(scan, "scan_output_directions", {1});
    OnnxBuilder body(11);
    body.input("st", {2}).input("xt", {2}).output("st2", {2}).output("yt", {2});
    body.node("Add", {"st", "xt"}, {"st2"}, "add");
    body.node("Mul", {"xt", "w"}, {"yt"}, "mul");
    OnnxBuilder::setGraph(scan, "body", body);
    return b;
}

std::vector<float> loopFinal(int turns)
{
    std::vector<float> v;
    for (size_t i = 0; i < 3; ++i)
        v.push_back(kX[i] + float(turns) * relu(kX[i]));
    return v;
}

std::vector<float> loopRows(int turns)
{
    std::vector<float> v;
    for (int k = 1; k <= turns; ++k)
        for (size_t i = 0; i < 3; ++i)
            v.push_back(kX[i] + float(k) * relu(kX[i]));
    return v;
}

using Build = std::function<OnnxBuilder()>;

}  // namespace

Q_DECLARE_METATYPE(Build)
Q_DECLARE_METATYPE(std::vector<ramiel::Tensor>)

class TestControlFlow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void runsSerialAndParallel_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<std::vector<Tensor>>("inputs");
        QTest::addColumn<std::vector<Tensor>>("expected");
        const Tensor x23 = floats({2, 3}, kX), x3 = floats({3}, {kX[0], kX[1], kX[2]});
        std::vector<float> neg, sig;
        float sum = 0;
        for (float v : kX) {
            neg.push_back(-relu(v));
            sig.push_back(sigmoid(v));
            sum += std::fabs(v);
        }
        QTest::newRow("If then") << Build([] { return ifModel(); }) << std::vector<Tensor>{x23, boolean(true)}
                                 << std::vector<Tensor>{floats({2, 3}, neg), floats({2, 3}, sig)};
        QTest::newRow("If else, another shape") << Build([] { return ifModel(); }) << std::vector<Tensor>{x23, boolean(false)}
                                                << std::vector<Tensor>{floats({}, {sum}), floats({2, 3}, sig)};
        QTest::newRow("Loop ended by its condition")
            << Build([] { return loopModel(true); }) << std::vector<Tensor>{x3, boolean(true)}
            << std::vector<Tensor>{floats({3}, loopFinal(3)), floats({3, 3}, loopRows(3))};
        QTest::newRow("Loop, condition false at the start")
            << Build([] { return loopModel(true); }) << std::vector<Tensor>{x3, boolean(false)}
            << std::vector<Tensor>{x3, floats({0}, {})};
        QTest::newRow("Loop by trip count, the body's condition ignored")
            << Build([] { return loopModel(false); }) << std::vector<Tensor>{x3, boolean(true)}
            << std::vector<Tensor>{floats({3}, loopFinal(5)), floats({5, 3}, loopRows(5))};
        QTest::newRow("If nested in a Loop, reading two scopes out")
            << Build(nestedModel) << std::vector<Tensor>{x3, boolean(true)} << std::vector<Tensor>{floats({3}, loopFinal(3))};
        const std::vector<float> s0 = {0.5f, -1.0f}, xs = {1, 2, 3, 4, -1, -2, -3, -4};
        std::vector<float> s = {s0[0] + 10, s0[1] - 10}, ys;
        for (size_t r = 0; r < 2; ++r)
            for (size_t c = 0; c < 4; ++c)
                ys.push_back(xs[r * 4 + c] * sigmoid(s0[r]));
        QTest::newRow("Scan: axis 1 backwards, output reversed along the last axis")
            << Build(scanModel) << std::vector<Tensor>{floats({2}, s0), floats({2, 4}, xs)}
            << std::vector<Tensor>{floats({2}, s), floats({2, 4}, ys)};
    }

    void runsSerialAndParallel()
    {
        QFETCH(Build, build);
        QFETCH(std::vector<Tensor>, inputs);
        QFETCH(std::vector<Tensor>, expected);
        const Model model = loadOnnxFromBytes(build().bytes(), "cf.onnx", {});
        const auto compiled = runtime().compile(model);
        compiled->setInputs(inputs);
        auto check = [&](const QString& where) {
            const auto out = compiled->outputs();
            QCOMPARE(out.size(), expected.size());
            for (size_t i = 0; i < out.size(); ++i) {
                QVERIFY2(out[i].dims == expected[i].dims,
                         qPrintable(where + QString(": output %1 has shape %2").arg(i).arg(QString::fromStdString(out[i].shape().toString()))));
                const auto got = valuesOf(out[i]), want = valuesOf(expected[i]);
                for (size_t k = 0; k < got.size(); ++k)
                    QVERIFY2(std::fabs(got[k] - want[k]) <= 1e-5f * (1 + std::fabs(want[k])),
                             qPrintable(where + QString(": output %1[%2] is %3, not %4").arg(i).arg(k).arg(got[k]).arg(want[k])));
            }
        };
        compiled->serialExecutor(1)->run();
        check("serial");
        if (QTest::currentTestFailed())
            return;
        // Every scheduler on 2 workers: the control-flow node is one task, its
        // outer values come from whichever worker made them.
        const Topology topo = buildTopology(model.graph);
        const CostTable costs =
            CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{}, EdgeCostParameters{});
        for (const SchedulerInfo& s : schedulers()) {
            const Plan plan = planSchedule(SchedulingProblem::of(model.graph, topo, costs, 2), s.name);
            QVERIFY(plan.validation.valid);
            const auto executor = compiled->parallelExecutor(plan.schedule);
            for (int run = 0; run < 2; ++run) {
                executor->run();
                check(QString::fromStdString(s.name) + " on 2 workers");
                if (QTest::currentTestFailed())
                    return;
            }
        }
    }

    // What only the run can tell is a one-line run-time error naming the node.
    void runTimeErrors_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<std::vector<Tensor>>("inputs");
        QTest::addColumn<QString>("says");
        QTest::newRow("If condition of two elements")
            << Build([] { return ifModel({2}); })
            << std::vector<Tensor>{floats({2, 3}, kX), tensorOf(DataType::Bool, {2}, std::vector<uint8_t>{1, 0})}
            << "node 'if' (If) failed: the condition must hold one element, it holds 2";
    }

    void runTimeErrors()
    {
        QFETCH(Build, build);
        QFETCH(std::vector<Tensor>, inputs);
        QFETCH(QString, says);
        const Model model = loadOnnxFromBytes(build().bytes(), "cf.onnx", {});
        const auto compiled = runtime().compile(model);
        try {
            compiled->setInputs(inputs);
            compiled->serialExecutor(1)->run();
            QFAIL("the run succeeded");
        } catch (const Error& e) {
            const QString what = e.what();
            QVERIFY2(what.startsWith("cf.onnx: ") && what.contains(says) && !what.contains('\n'), qPrintable(what));
        }
    }

    // Broken control-flow nodes: refused before anything runs, one line naming the
    // node and the rule (nested bodies are checked as the main graph is).
    void refusedBeforeRunning_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<QString>("says");
        QTest::newRow("If without else_branch") << Build([] {
            OnnxBuilder b = ifModel();
            auto* n = b.model().mutable_graph()->mutable_node(3);
            n->mutable_attribute()->RemoveLast();
            return b;
        }) << "node 'if' (If): lacks the required attribute 'else_branch'";
        QTest::newRow("If branch with an input") << Build([] {
            OnnxBuilder b = ifModel();
            auto* g = b.model().mutable_graph()->mutable_node(3)->mutable_attribute(0)->mutable_g();
            *g->add_input() = b.model().graph().input(0);
            return b;
        }) << "node 'if' (If): the then_branch takes 1 inputs and makes 1 outputs, the node needs 0 and 1";
        QTest::newRow("Loop body with an input too many") << Build([] {
            OnnxBuilder b = loopModel(true);
            auto* g = b.model().mutable_graph()->mutable_node(2)->mutable_attribute(0)->mutable_g();
            *g->add_input() = g->input(2);
            g->mutable_input(3)->set_name("extra");
            return b;
        }) << "node 'loop' (Loop): the body takes 4 inputs and makes 3 outputs, the node needs 3 and 3";
        QTest::newRow("Loop with neither trip count nor condition") << Build([] {
            OnnxBuilder b = loopModel(false);
            b.model().mutable_graph()->mutable_node(2)->set_input(0, "");
            return b;
        }) << "node 'loop' (Loop): has neither a trip count nor a condition";
        QTest::newRow("Scan with num_scan_inputs 0") << Build([] {
            OnnxBuilder b = scanModel();
            b.model().mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_i(0);
            return b;
        }) << "node 'scan' (Scan): num_scan_inputs 0 must be between 1 and 2";
        QTest::newRow("Scan axes for two scan inputs") << Build([] {
            OnnxBuilder b = scanModel();
            b.model().mutable_graph()->mutable_node(1)->mutable_attribute(1)->add_ints(0);
            return b;
        }) << "node 'scan' (Scan): 'scan_input_axes' has 2 entries, the node needs 1";
        QTest::newRow("a broken node inside a body") << Build([] {
            OnnxBuilder b = loopModel(true);
            auto* g = b.model().mutable_graph()->mutable_node(2)->mutable_attribute(0)->mutable_g();
            g->mutable_node(0)->add_input("acc");  // Add with 3 inputs
            return b;
        }) << "node 'add' (Add): has 3 inputs, the operator takes 2";
    }

    void refusedBeforeRunning()
    {
        QFETCH(Build, build);
        QFETCH(QString, says);
        try {
            const Model model = loadOnnxFromBytes(build().bytes(), "cf.onnx", {});
            runtime().compile(model);
            QFAIL("compiled");
        } catch (const Error& e) {
            const QString what = e.what();
            QVERIFY2(e.kind() == ErrorKind::InvalidGraph, qPrintable(what));
            QVERIFY2(what.startsWith("cf.onnx: ") && what.contains(says) && !what.contains('\n'), qPrintable(what));
        }
    }

    // The branch an If takes and whether a Loop's condition ends it early are
    // data: the static cost is unknown (measured costs fill it in). A Loop by trip
    // count alone and a Scan are body x iterations (tst_cost_model).
    void staticCosts()
    {
        auto costOf = [](const OnnxBuilder& b, const std::string& op) {
            const Model m = loadOnnxFromBytes(b.bytes(), "cf.onnx", {});
            for (const Node& n : m.graph.nodes())
                if (n.opType == op)
                    return estimateNodeCost(m.graph, n.id);
            return NodeCost{};
        };
        OnnxBuilder sameShapes(13);  // branches of one shape: only the choice is unknown
        sameShapes.input("x", {3}).input("c", {}, onnx::TensorProto::BOOL).output("y", {3});
        auto& iff = sameShapes.node("If", {"c"}, {"y"}, "if");
        OnnxBuilder then(13), otherwise(13);
        then.output("t", {3});
        then.node("Neg", {"x"}, {"t"}, "neg");
        otherwise.output("e", {3});
        otherwise.node("Abs", {"x"}, {"e"}, "abs");
        OnnxBuilder::setGraph(iff, "then_branch", then);
        OnnxBuilder::setGraph(iff, "else_branch", otherwise);
        const NodeCost branch = costOf(sameShapes, "If");
        QVERIFY(!branch.known);
        QVERIFY2(QString::fromStdString(branch.unknownReason).contains("run time"), branch.unknownReason.c_str());
        const NodeCost conditional = costOf(nestedModel(), "Loop");
        QVERIFY(!conditional.known);
        QVERIFY2(QString::fromStdString(conditional.unknownReason).contains("condition"), conditional.unknownReason.c_str());
    }
};

QTEST_MAIN(TestControlFlow)
#include "tst_control_flow.moc"
