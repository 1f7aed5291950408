// The static cost model: FLOPs and bytes of single operators whose answers
// are worked out by hand, on models built with the onnx API and shaped by
// ONNX's own shape inference.
#include "core/analysis/cost_model.h"
#include "core/ir/fused_ops.h"
#include "core/onnx/onnx_import.h"
#include "onnx_builder.h"

#include <QtTest>

#include <cmath>
#include <functional>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

using Build = std::function<void(OnnxBuilder&)>;
Q_DECLARE_METATYPE(Build)

namespace {

// The cost of the node named "op" in a model built by `build`.
NodeCost costOf(const Build& build, int opset = 13)
{
    OnnxBuilder b(opset);
    build(b);
    const Model m = loadOnnxFromBytes(b.bytes(), "test.onnx", {});
    for (const Node& n : m.graph.nodes())
        if (n.name == "op")
            return estimateNodeCost(m.graph, n.id);
    throw std::runtime_error("no node named op");
}

}  // namespace

class TestCostModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void flopsAndBytes_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<int>("opset");
        QTest::addColumn<double>("flops");
        QTest::addColumn<double>("bytes");  // read + written; < 0: not checked

        // Conv 1x3x8x8 * W 4x3x3x3, pad 1 -> 1x4x8x8 (256 outputs), 27 MACs each.
        QTest::newRow("conv") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 3, 8, 8}).initializer("w", {4, 3, 3, 3}).output("y");
            OnnxBuilder::setInts(b.node("Conv", {"x", "w"}, {"y"}, "op"), "pads", {1, 1, 1, 1});
        }) << 13 << 2.0 * 256 * 27 << 4.0 * (192 + 108 + 256);
        // With bias: one more add per output.
        QTest::newRow("conv-bias") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 3, 8, 8}).initializer("w", {4, 3, 3, 3}).initializer("b", {4}).output("y");
            OnnxBuilder::setInts(b.node("Conv", {"x", "w", "b"}, {"y"}, "op"), "pads", {1, 1, 1, 1});
        }) << 13 << 2.0 * 256 * 27 + 256 << 4.0 * (192 + 108 + 4 + 256);
        // Grouped: 1x4x8x8, W 6x2x3x3, group 2 -> 1x6x8x8 (384 outputs), 18 MACs each.
        QTest::newRow("conv-grouped") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 4, 8, 8}).initializer("w", {6, 2, 3, 3}).output("y");
            auto& n = b.node("Conv", {"x", "w"}, {"y"}, "op");
            OnnxBuilder::setInts(n, "pads", {1, 1, 1, 1});
            OnnxBuilder::setInt(n, "group", 2);
        }) << 13 << 2.0 * 384 * 18 << -1.0;
        // Strided: 1x3x8x8, W 4x3x3x3, stride 2, pad 1 -> 1x4x4x4 (64 outputs).
        QTest::newRow("conv-strided") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 3, 8, 8}).initializer("w", {4, 3, 3, 3}).output("y");
            auto& n = b.node("Conv", {"x", "w"}, {"y"}, "op");
            OnnxBuilder::setInts(n, "pads", {1, 1, 1, 1});
            OnnxBuilder::setInts(n, "strides", {2, 2});
        }) << 13 << 2.0 * 64 * 27 << -1.0;
        // ConvTranspose 1x4x4x4 (64 inputs), W 4x2x3x3: each input feeds 18 outputs.
        QTest::newRow("conv-transpose") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 4, 4, 4}).initializer("w", {4, 2, 3, 3}).output("y");
            b.node("ConvTranspose", {"x", "w"}, {"y"}, "op");
        }) << 13 << 2.0 * 64 * 18 << 4.0 * (64 + 72 + 2 * 6 * 6);
        // Gemm 2x3 * 3x5 + C[5] -> 2x5.
        QTest::newRow("gemm") << Build([](OnnxBuilder& b) {
            b.input("a", {2, 3}).initializer("b", {3, 5}).initializer("c", {5}).output("y");
            b.node("Gemm", {"a", "b", "c"}, {"y"}, "op");
        }) << 13 << 2.0 * 10 * 3 + 10 << 4.0 * (6 + 15 + 5 + 10);
        // Gemm with transA: A is 3x2, so K = 3.
        QTest::newRow("gemm-transA") << Build([](OnnxBuilder& b) {
            b.input("a", {3, 2}).initializer("b", {3, 5}).output("y");
            OnnxBuilder::setInt(b.node("Gemm", {"a", "b"}, {"y"}, "op"), "transA", 1);
        }) << 13 << 2.0 * 10 * 3 << -1.0;
        // Batched MatMul 2x4x3 * 3x5 -> 2x4x5.
        QTest::newRow("matmul") << Build([](OnnxBuilder& b) {
            b.input("a", {2, 4, 3}).initializer("b", {3, 5}).output("y");
            b.node("MatMul", {"a", "b"}, {"y"}, "op");
        }) << 13 << 2.0 * 40 * 3 << 4.0 * (24 + 15 + 40);
        QTest::newRow("relu") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 3, 4}).output("y");
            b.node("Relu", {"x"}, {"y"}, "op");
        }) << 13 << 24.0 << 4.0 * 48;
        // Broadcasting add: 2x3 + 3 -> 2x3.
        QTest::newRow("add-broadcast") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 3}).initializer("c", {3}).output("y");
            b.node("Add", {"x", "c"}, {"y"}, "op");
        }) << 13 << 6.0 << 4.0 * (6 + 3 + 6);
        QTest::newRow("sigmoid") << Build([](OnnxBuilder& b) {
            b.input("x", {10}).output("y");
            b.node("Sigmoid", {"x"}, {"y"}, "op");
        }) << 13 << 40.0 << 80.0;
        // Sum of three inputs: two adds per element.
        QTest::newRow("sum-variadic") << Build([](OnnxBuilder& b) {
            b.input("x", {4}).input("y", {4}).input("z", {4}).output("s");
            b.node("Sum", {"x", "y", "z"}, {"s"}, "op");
        }) << 13 << 8.0 << 4.0 * 16;
        // MaxPool 1x1x4x4, kernel 2, stride 2 -> 1x1x2x2: 4 outputs x 4 taps.
        QTest::newRow("maxpool") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 1, 4, 4}).output("y");
            auto& n = b.node("MaxPool", {"x"}, {"y"}, "op");
            OnnxBuilder::setInts(n, "kernel_shape", {2, 2});
            OnnxBuilder::setInts(n, "strides", {2, 2});
        }) << 13 << 16.0 << 4.0 * (16 + 4);
        QTest::newRow("global-average-pool") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 2, 3, 3}).output("y");
            b.node("GlobalAveragePool", {"x"}, {"y"}, "op");
        }) << 13 << 18.0 << 4.0 * (18 + 2);
        QTest::newRow("softmax") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 5}).output("y");
            b.node("Softmax", {"x"}, {"y"}, "op");
        }) << 13 << 50.0 << 80.0;
        QTest::newRow("layer-norm") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 4}).initializer("g", {4}).initializer("b", {4}).output("y");
            b.node("LayerNormalization", {"x", "g", "b"}, {"y"}, "op");
        }) << 17 << 64.0 << 4.0 * (8 + 4 + 4 + 8);
        QTest::newRow("batch-norm") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 2, 2, 2}).initializer("s", {2}).initializer("b", {2}).initializer("m", {2})
                .initializer("v", {2}).output("y");
            b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "op");
        }) << 13 << 16.0 << 4.0 * (8 + 8 + 8);
        // ReduceMean over 2x5: one op per input element.
        QTest::newRow("reduce-mean") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 5}).output("y");
            OnnxBuilder::setInts(b.node("ReduceMean", {"x"}, {"y"}, "op"), "axes", {1});
        }) << 13 << 10.0 << 4.0 * (10 + 2);
        // Concat moves data and computes nothing.
        QTest::newRow("concat") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 3}).input("z", {2, 2}).output("y");
            OnnxBuilder::setInt(b.node("Concat", {"x", "z"}, {"y"}, "op"), "axis", 1);
        }) << 13 << 0.0 << 4.0 * (6 + 4 + 10);
        // Slice reads what it writes (plus its index inputs).
        QTest::newRow("slice") << Build([](OnnxBuilder& b) {
            b.input("x", {10, 10}).initializerInt64("s", {0}).initializerInt64("e", {2}).output("y");
            b.node("Slice", {"x", "s", "e"}, {"y"}, "op");
        }) << 13 << 0.0 << 4.0 * 20 * 2 + 16;
        // Reshape is a view: no data moved.
        QTest::newRow("reshape") << Build([](OnnxBuilder& b) {
            b.input("x", {2, 3}).initializerInt64("s", {3, 2}).output("y");
            b.node("Reshape", {"x", "s"}, {"y"}, "op");
        }) << 13 << 0.0 << 0.0;
        // An operator without a formula gets a byte-based estimate.
        QTest::newRow("no-formula") << Build([](OnnxBuilder& b) {
            b.input("x", {1, 2, 4, 4}).input("rois", {3, 5}).output("y");
            OnnxBuilder::setInts(b.node("MaxRoiPool", {"x", "rois"}, {"y"}, "op"), "pooled_shape", {2, 2});
        }) << 13 << 0.0 << 4.0 * (32 + 15 + 24);
    }

    void flopsAndBytes()
    {
        QFETCH(Build, build);
        QFETCH(int, opset);
        QFETCH(double, flops);
        QFETCH(double, bytes);
        const NodeCost c = costOf(build, opset);
        QVERIFY2(c.known, c.unknownReason.c_str());
        QCOMPARE(c.flops, flops);
        if (bytes >= 0)
            QCOMPARE(c.bytes(), bytes);
    }

    // The fusion passes' operators cost what the ONNX operator they run as does, by its
    // formula, not the byte estimate of an operator without one. (Their outputs' shapes are
    // declared: ONNX's shape inference does not know them; in a pipeline the passes keep
    // the shapes inferred before the fusion.)
    void ramielOperatorsHaveFormulas_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<double>("flops");
        auto ramiel = [](OnnxBuilder& b, onnx::NodeProto& n) {
            n.set_domain(kRamielDomain);
            auto* o = b.model().add_opset_import();
            o->set_domain(kRamielDomain);
            o->set_version(1);
        };
        QTest::newRow("Gelu, as Gelu") << Build([=](OnnxBuilder& b) {
            b.input("x", {10}).output("y", {10});
            ramiel(b, b.node(kGelu, {"x"}, {"y"}, "op"));
        }) << 80.0;
        QTest::newRow("Silu, as Sigmoid") << Build([=](OnnxBuilder& b) {
            b.input("x", {10}).output("y", {10});
            ramiel(b, b.node(kSilu, {"x"}, {"y"}, "op"));
        }) << 40.0;
        QTest::newRow("HardSwish, as HardSwish") << Build([=](OnnxBuilder& b) {
            b.input("x", {10}).output("y", {10});
            ramiel(b, b.node(kHardSwish, {"x"}, {"y"}, "op"));
        }) << 40.0;
        QTest::newRow("MatMulAdd, as MatMul") << Build([=](OnnxBuilder& b) {
            b.input("a", {2, 4, 3}).initializer("b", {3, 5}).initializer("c", {5}).output("y", {2, 4, 5});
            ramiel(b, b.node(kMatMulAdd, {"a", "b", "c"}, {"y"}, "op"));
        }) << 2.0 * 40 * 3;
    }

    void ramielOperatorsHaveFormulas()
    {
        QFETCH(Build, build);
        QFETCH(double, flops);
        const NodeCost c = costOf(build);
        QVERIFY2(c.known, c.unknownReason.c_str());
        QVERIFY(!c.estimated);
        QCOMPARE(c.flops, flops);
    }

    void unknownOpEstimateIsFlagged()
    {
        const NodeCost c = costOf([](OnnxBuilder& b) {
            b.input("x", {1, 2, 4, 4}).input("rois", {3, 5}).output("y");
            OnnxBuilder::setInts(b.node("MaxRoiPool", {"x", "rois"}, {"y"}, "op"), "pooled_shape", {2, 2});
        });
        QVERIFY(c.estimated);
        QVERIFY(c.bytes() > 0);
    }

    void symbolicShapeMakesCostUnknown()
    {
        const NodeCost c = costOf([](OnnxBuilder& b) {
            b.input("x", {-1, 3}, onnx::TensorProto::FLOAT, {"N", ""}).output("y");
            b.node("Relu", {"x"}, {"y"}, "op");
        });
        QVERIFY(!c.known);
        QVERIFY(QString::fromStdString(c.unknownReason).contains("'x'"));
        MachineConstants m;
        QVERIFY(std::isnan(costSeconds(c, m)));
    }

    // Control flow: body cost x iterations, from ONNX's conformance models.
    void controlFlow_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("flops");
        // Scan-9 and Scan-8 (batch-major) summing 3 rows of 2: 3 iterations x one 2-element Add.
        QTest::newRow("scan9") << "test_scan9_sum" << 6.0;
        QTest::newRow("scan8") << "test_scan_sum" << 6.0;
    }

    void controlFlow()
    {
        QFETCH(QString, model);
        QFETCH(double, flops);
        const QString path = "/usr/share/libonnx-testdata/data/node/" + model + "/model.onnx";
        if (!QFile::exists(path))
            QFAIL("libonnx-testdata is missing: apt-get install libonnx-testdata");
        const Model m = loadOnnx(path.toStdString());
        const NodeCost c = estimateNodeCost(m.graph, 0);
        QVERIFY2(c.known, c.unknownReason.c_str());
        QCOMPARE(c.flops, flops);
    }

    void rooflineFormula()
    {
        MachineConstants m;
        m.flopsPerSecond = 1e9;
        m.bytesPerSecond = 1e8;
        m.overheadSeconds = 1e-6;
        NodeCost compute;
        compute.flops = 1e6;  // 1 ms of compute
        compute.bytesRead = 1e4;  // 0.1 ms of memory
        QCOMPARE(costSeconds(compute, m), 1e-6 + 1e-3);
        NodeCost memory;
        memory.flops = 1e3;
        memory.bytesRead = 1e5;  // 1 ms of memory
        QCOMPARE(costSeconds(memory, m), 1e-6 + 1e-3);
        NodeCost view;  // zero work still costs the dispatch overhead
        QCOMPARE(costSeconds(view, m), 1e-6);
    }
};

QTEST_APPLESS_MAIN(TestCostModel)
#include "tst_cost_model.moc"
