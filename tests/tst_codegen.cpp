// Code generation end to end: `ramiel export` writes Python and C++ for real
// models, the generated programs run (Python under /usr/bin/python3, C++
// built with CMake against libtorch in one project), and their outputs equal
// the runtime's serial outputs. A model with hostile names generates code
// that runs and executes nothing else; pyflakes is clean on generated Python.
#include "core/analysis/cost_model.h"
#include "core/codegen/codegen.h"
#include "core/codegen/names.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/scheduler.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "onnx_builder.h"
#include "test_support.h"
#include "written_out.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <tuple>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

const QString kMachine = test::sourcePath("tests/data/machine.json");
const QString kPython = "/usr/bin/python3";

struct Variant {
    QString name;   // folder and C++ target name
    QString model;  // .onnx path
    int batch = 1;
    int degree = 1;
    QString passes = "none";  // graph passes before generation (the reference stays the unoptimized model)
    bool oneDnn = true;   // C++: oneDNN primitives of the program's own (MODEL_USE_ONEDNN) where its headers are
    QStringList options = {};  // more `ramiel export` options
    QStringList inputs = {};   // .npy files, one per graph input (default: one random input)
    bool detections = false;   // outputs boxes, labels, scores: compared as sets (test::detectionDifference)
};

struct ProcessResult {
    int exitCode = -1;
    QString out;
};

ProcessResult runProcess(const QString& program, const QStringList& args, const QString& dir = {}, int timeoutMs = 600000,
                         const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.setProcessEnvironment(env);
    if (!dir.isEmpty())
        p.setWorkingDirectory(dir);
    p.start(program, args);
    p.waitForFinished(timeoutMs);
    ProcessResult r;
    r.out = QString::fromUtf8(p.readAll());
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

using test::relativeDifference;

Tensor randomInput(const Model& model, int batch, unsigned seed)
{
    const Value& v = model.graph.value(model.graph.inputs().front());
    Tensor t;
    t.dtype = DataType::Float;
    for (const Dim& d : v.type.shape->dims)
        t.dims.push_back(d.value);
    t.dims[0] *= batch;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    t.data.resize(size_t(t.numel()) * sizeof(float));
    for (int64_t i = 0; i < t.numel(); ++i) {
        const float f = normal(rng);
        std::memcpy(t.data.data() + i * 4, &f, 4);
    }
    return t;
}

// A model whose every name tries to break out of generated code, an If and the values
// its branches read (their functions and parameters) included. The shell commands would
// create `marker` if anything executed them.
std::string hostileModel(const QString& marker)
{
    const std::string touch = marker.toStdString();
    const std::string pyInjection = "x'\"\n__import__('os').system('touch " + touch + "')#";
    const std::string cppInjection = "y\"); system(\"touch " + touch + "\"); //\\";
    OnnxBuilder b;
    b.input(pyInjection, {1, 16, 56, 56});
    b.initializer("class", {32, 16, 3, 3}, 0.01f);
    b.initializer("__class__", {32}, 0.1f);
    b.initializer("w\\", {32, 16, 3, 3}, -0.02f);
    b.initializer("w\"", {32}, 0.3f);
    auto& conv = b.node("Conv", {pyInjection, "class", "__class__"}, {"*/ \\"}, "def");
    OnnxBuilder::setInts(conv, "pads", {1, 1, 1, 1});
    OnnxBuilder::setInts(b.node("Conv", {pyInjection, "w\\", "w\""}, {"a-b"}, "a_b"), "pads", {1, 1, 1, 1});
    b.node("Relu", {"*/ \\"}, {"a_b"}, "a-b");                       // clashes with a-b after sanitizing
    b.node("Sigmoid", {"a-b"}, {"a.b"}, "\xd0\xb2\xd1\x8b\xd1\x85");  // Cyrillic
    b.node("Add", {"a_b", "a.b"}, {"return"}, "import");
    OnnxBuilder::setInt(b.node("Concat", {"return", "a.b"}, {cppInjection}, "*/\n#include <cstdlib>\n/*"), "axis", 1);
    b.node("GlobalAveragePool", {cppInjection}, {"\xe2\x80\xa8\xd0\xb2\xd1\x8b\xd1\x85\xd0\xbe\xd0\xb4"}, "?\?/");
    // An If named to break out, whose branches read values named so (their functions' parameters).
    b.initializer("zero", {}, 0.0f);
    OnnxBuilder::setInt(b.node("ReduceMax", {"a.b"}, {"top"}), "keepdims", 0);
    b.node("Greater", {"top", "zero"}, {"if'\"\n__import__('os')"});
    OnnxBuilder then(13), otherwise(13);
    then.node("Relu", {"return"}, {"t"}, "then */ \\");
    then.output("t", {1, 32, 56, 56});
    otherwise.node("Neg", {"a.b"}, {"e"});
    otherwise.output("e", {1, 32, 56, 56});
    auto& iff = b.node("If", {"if'\"\n__import__('os')"}, {"branch\")"}, pyInjection + " */");
    OnnxBuilder::setGraph(iff, "then_branch", then);
    OnnxBuilder::setGraph(iff, "else_branch", otherwise);
    b.output(cppInjection, {1, 64, 56, 56});
    b.output("\xe2\x80\xa8\xd0\xb2\xd1\x8b\xd1\x85\xd0\xbe\xd0\xb4", {1, 64, 1, 1});
    b.output("branch\")", {1, 32, 56, 56});
    return b.bytes();
}

// Three branches after a graph input: Conv then SiLU written out (Sigmoid, Mul), Conv
// then GELU written out (Div by √2, Erf, Add 1, Mul, Mul 0.5), and a linear layer on the
// channels (Transpose, MatMul, Add of a bias, GELU, Transpose back), added; with the
// default passes they run as a FusedConv with SiLU, ai.ramiel.Gelu and ai.ramiel.MatMulAdd
// with its GELU. Nodes named after the generated code's helpers (linear, layer_norm, softmax)
// name values that must not hide them.
std::string activationsModel()
{
    OnnxBuilder b;
    b.input("x", {1, 16, 28, 28});
    b.initializer("w1", {16, 16, 1, 1}, 0.05f).initializer("w2", {16, 16, 1, 1}, -0.03f);
    b.initializer("w3", {16, 16}, 0.04f).initializer("b3", {16}, 0.1f);
    b.initializer("sqrt2", {}, 1.4142135f).initializer("one", {}, 1.0f).initializer("half", {}, 0.5f);
    b.initializer("two", {}, 2.0f).initializer("eps", {}, 1e-5f).initializer("ln_w", {16}, 0.9f).initializer("ln_b", {16}, 0.05f);
    OnnxBuilder::setInts(b.node("Transpose", {"x"}, {"xt"}), "perm", {0, 2, 3, 1});
    // A layer normalization over the channels, written out as PyTorch does before opset 17.
    OnnxBuilder::setInts(b.node("ReduceMean", {"xt"}, {"mean"}), "axes", {-1});
    b.node("Sub", {"xt", "mean"}, {"centered"});
    b.node("Pow", {"centered", "two"}, {"squared"});
    OnnxBuilder::setInts(b.node("ReduceMean", {"squared"}, {"variance"}), "axes", {-1});
    b.node("Add", {"variance", "eps"}, {"variance_eps"});
    b.node("Sqrt", {"variance_eps"}, {"deviation"});
    b.node("Div", {"centered", "deviation"}, {"normalized"});
    b.node("Mul", {"normalized", "ln_w"}, {"scaled"});
    b.node("Add", {"scaled", "ln_b"}, {"xn"}).set_name("/layer_norm/Add");
    b.node("MatMul", {"xn", "w3"}, {"m3"}).set_name("/linear/MatMul");
    b.node("Add", {"m3", "b3"}, {"s3"}).set_name("/linear/Add");
    b.node("Div", {"s3", "sqrt2"}, {"d3"});
    b.node("Erf", {"d3"}, {"e3"});
    b.node("Add", {"e3", "one"}, {"a3"});
    b.node("Mul", {"s3", "a3"}, {"t3"});
    b.node("Mul", {"t3", "half"}, {"g3"});
    OnnxBuilder::setInts(b.node("Transpose", {"g3"}, {"lin"}), "perm", {0, 3, 1, 2});
    b.node("Conv", {"x", "w1"}, {"c1"});
    b.node("Sigmoid", {"c1"}, {"s1"});
    b.node("Mul", {"c1", "s1"}, {"silu"});
    b.node("Conv", {"x", "w2"}, {"c2"});
    b.node("Div", {"c2", "sqrt2"}, {"d2"});
    b.node("Erf", {"d2"}, {"e2"});
    b.node("Add", {"e2", "one"}, {"a2"});
    b.node("Mul", {"c2", "a2"}, {"m2"});
    b.node("Mul", {"m2", "half"}, {"gelu"});
    b.node("Add", {"silu", "gelu"}, {"y0"});
    b.node("Softmax", {"y0"}, {"p"}).set_name("/softmax/Softmax");
    b.node("Add", {"p", "lin"}, {"y"});
    b.output("y", {1, 16, 28, 28});
    return b.bytes();
}

// ShuffleNet's unit at a stage's start: two convolutions concatenated, the channels
// shuffled (Reshape, Transpose, Reshape) and read whole by a third convolution; with
// the default passes the Concat and the shuffle run as one ai.ramiel.ChannelShuffle.
std::string shuffleModel()
{
    OnnxBuilder b;
    b.input("x", {1, 8, 14, 14});
    b.initializer("w1", {6, 8, 1, 1}, 0.05f).initializer("w2", {6, 8, 1, 1}, -0.03f);
    b.initializer("w3", {12, 12, 1, 1}, 0.02f);
    b.initializerInt64("grouped", {1, 2, 6, 14, 14}).initializerInt64("back", {1, 12, 14, 14});
    b.node("Conv", {"x", "w1"}, {"c1"});
    b.node("Relu", {"x"}, {"r"});
    b.node("Conv", {"r", "w2"}, {"c2"});
    OnnxBuilder::setInt(b.node("Concat", {"c1", "c2"}, {"cat"}), "axis", 1);
    b.node("Reshape", {"cat", "grouped"}, {"g"});
    OnnxBuilder::setInts(b.node("Transpose", {"g"}, {"t"}), "perm", {0, 2, 1, 3, 4});
    b.node("Reshape", {"t", "back"}, {"s"});
    b.node("Conv", {"s", "w3"}, {"y"});
    b.output("y", {1, 12, 14, 14});
    return b.bytes();
}

// Constants shared through Identity nodes, as PyTorch's exporter writes equal initializers:
// a convolution's bias through a chain of two, a classifier's weights and bias through one each.
std::string sharedConstantsModel()
{
    OnnxBuilder b;
    b.input("x", {1, 8, 14, 14});
    b.initializer("w1", {16, 8, 3, 3}, [](int64_t j) { return float(std::sin(0.37 * double(j))) * 0.1f; });
    b.initializer("b1", {16}, 0.05f);
    b.initializer("w2", {10, 16 * 14 * 14}, [](int64_t j) { return float(std::cos(0.11 * double(j))) * 0.01f; });
    b.initializer("b2", {10}, -0.2f);
    b.node("Identity", {"b1"}, {"b1_shared"});
    b.node("Identity", {"b1_shared"}, {"b1_again"});
    OnnxBuilder::setInts(b.node("Conv", {"x", "w1", "b1_again"}, {"c"}), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"r"});
    b.node("Flatten", {"r"}, {"f"});
    b.node("Identity", {"w2"}, {"w2_shared"});
    b.node("Identity", {"b2"}, {"b2_shared"});
    OnnxBuilder::setInt(b.node("Gemm", {"f", "w2_shared", "b2_shared"}, {"y"}), "transB", 1);
    b.output("y", {1, 10});
    return b.bytes();
}

// DenseNet's layer: the block's input and a convolution's output concatenated, batch
// normalized and rectified, then a convolution; with the default passes the first three
// run as one ai.ramiel.FusedBatchNorm. Then a group normalization as PyTorch exports it and
// a Relu, which run as one ai.ramiel.FusedGroupNorm.
std::string denseModel()
{
    OnnxBuilder b;
    b.input("x", {1, 8, 14, 14});
    b.initializer("w1", {6, 8, 3, 3}, 0.05f).initializer("w2", {6, 14, 1, 1}, -0.03f);
    b.initializer("scale", {14}, 1.2f).initializer("bias", {14}, -0.1f);
    b.initializer("mean", {14}, 0.3f).initializer("var", {14}, 2.0f);
    OnnxBuilder::setInts(b.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
    OnnxBuilder::setInt(b.node("Concat", {"x", "c1"}, {"cat"}), "axis", 1);
    b.node("BatchNormalization", {"cat", "scale", "bias", "mean", "var"}, {"n"});
    b.node("Relu", {"n"}, {"r"});
    b.node("Conv", {"r", "w2"}, {"c2"});
    test::writtenOutGroupNorm(b, "c2", "gn", 6, 2, 4, "g");
    b.node("Relu", {"g"}, {"y"});
    b.output("y", {1, 6, 14, 14});
    return b.bytes();
}

// Indexing and reductions as transformers and detectors export them: Slice with negative,
// stepped and multi-axis bounds, Gather of one index (kept and dropped axis), of a list
// and of a matrix of indices, ReduceSum / ReduceMax / ReduceMin, Unsqueeze and Squeeze,
// Pow by a constant and by a tensor, an Einsum, and Split (given sizes, equal parts).
std::string indexingModel()
{
    OnnxBuilder b;
    b.input("x", {1, 4, 6, 8});
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    b.initializerInt64("s1_starts", {-1}).initializerInt64("s1_ends", {kMin}).initializerInt64("s1_axes", {3});
    b.initializerInt64("s1_steps", {-3});
    b.initializerInt64("s2_starts", {1, -5}).initializerInt64("s2_ends", {3, kMax}).initializerInt64("s2_axes", {1, -2});
    b.initializerInt64("s2_steps", {1, 2});
    b.initializerInt64("s3_starts", {kMin}).initializerInt64("s3_ends", {2}).initializerInt64("s3_axes", {2});
    b.initializerInt64("split_sizes", {1, 3});
    // A constant table read by a matrix of indices (as a relative position bias is).
    b.initializer("table", {5, 4}, [](int64_t i) { return float(i) * 0.25f; });
    b.initializerInt64("rows", {4, 0, 2, 2, 1, 3}, {2, 3});
    b.initializerInt64("i_scalar", {2}, {}).initializerInt64("i_one", {-1}).initializerInt64("i_list", {3, 0, 1});
    b.initializerInt64("i_matrix", {0, 2, 1, 1, 7, 3}, {3, 2});
    b.initializerInt64("last", {-1}).initializerInt64("u_axes", {1, -1}).initializerInt64("q_axes", {4});
    b.initializer("two", {}, 2.0f);
    b.node("Slice", {"x", "s1_starts", "s1_ends", "s1_axes", "s1_steps"}, {"s1"});
    b.node("Slice", {"s1", "s2_starts", "s2_ends", "s2_axes", "s2_steps"}, {"y1"});
    b.node("Slice", {"x", "s3_starts", "s3_ends", "s3_axes"}, {"y7"});
    OnnxBuilder::setInt(b.node("Gather", {"x", "i_scalar"}, {"g1"}), "axis", 1);
    OnnxBuilder::setInt(b.node("Gather", {"x", "i_one"}, {"g2"}), "axis", 2);
    OnnxBuilder::setInt(b.node("Gather", {"x", "i_matrix"}, {"g3"}), "axis", 3);
    OnnxBuilder::setInt(b.node("Gather", {"x", "i_list"}, {"g4"}), "axis", 1);
    OnnxBuilder::setInt(b.node("ReduceSum", {"g3", "last"}, {"y2"}), "keepdims", 0);
    OnnxBuilder::setInts(b.node("ReduceMax", {"g4"}, {"y3"}), "axes", {1});
    auto& min = b.node("ReduceMin", {"g2"}, {"y4"});
    OnnxBuilder::setInts(min, "axes", {2});
    OnnxBuilder::setInt(min, "keepdims", 0);
    b.node("Unsqueeze", {"g1", "u_axes"}, {"u1"});
    b.node("Squeeze", {"u1", "q_axes"}, {"q1"});
    b.node("Pow", {"q1", "two"}, {"p1"});
    b.node("Sigmoid", {"q1"}, {"positive"});
    b.node("Pow", {"positive", "positive"}, {"p2"});
    b.node("Add", {"p1", "p2"}, {"y5"});
    // Two parts read by different nodes, and three equal parts of which one is never read.
    OnnxBuilder::setInt(b.node("Split", {"x", "split_sizes"}, {"part1", "part3"}), "axis", 1);
    b.node("Relu", {"part1"}, {"r1"});
    b.node("Sigmoid", {"part3"}, {"s3"});
    b.node("Add", {"r1", "s3"}, {"y8"});
    OnnxBuilder::setInt(b.node("Split", {"x"}, {"e1", "e2", "e3"}), "axis", 2);
    b.node("Sub", {"e1", "e3"}, {"y9"});
    b.node("Gather", {"table", "rows"}, {"bias"});
    b.node("ReduceSum", {"bias"}, {"bias_sum"});
    b.node("Add", {"y9", "bias_sum"}, {"y10"});
    OnnxBuilder::setString(b.node("Einsum", {"x", "x"}, {"y6"}), "equation", "bchw, bcgw -> bhg");
    b.output("y1", {1, 2, 3, 3}).output("y2", {1, 4, 6, 3}).output("y3", {1, 1, 6, 8}).output("y4", {1, 4, 8});
    b.output("y5", {1, 1, 6, 8}).output("y6", {1, 6, 6}).output("y7", {1, 4, 2, 8});
    b.output("y8", {1, 3, 6, 8}).output("y9", {1, 4, 2, 8}).output("y10", {1, 4, 2, 8});
    return b.bytes();
}

// The elementwise, normalization, rearranging and dynamic-quantization operators beyond the test
// models' (opset 16: Trilu, CastLike, ScatterND's reduction), each result a float output: C++
// renders them through at:: functions and helpers of their own (the conformance tests check the
// Python).
std::string mathOpsModel()
{
    OnnxBuilder b(16);
    b.input("x", {1, 8, 6, 6});
    b.initializer("slope", {8, 1, 1}, [](int64_t i) { return float(i) * 0.1f - 0.3f; });
    b.initializerInt64("k", {1}, {}).initializerInt64("cum_axis", {2}, {});
    std::vector<int64_t> picks;  // along axis 2 (6 rows), negative ones counted from the end
    for (int64_t i = 0; i < 96; ++i)
        picks.push_back(i % 12 - 6);
    b.initializerInt64("picks", picks, {1, 8, 2, 6});
    b.node("Sin", {"x"}, {"sin"});
    b.node("Cos", {"x"}, {"cos"});
    b.node("Atan", {"x"}, {"atan"});
    b.node("Sum", {"sin", "cos", "atan"}, {"y1"});
    b.node("Sign", {"x"}, {"sign"});
    b.node("Softsign", {"x"}, {"softsign"});
    b.node("Selu", {"x"}, {"selu"});
    b.node("Mean", {"sign", "softsign", "selu"}, {"y2"});
    OnnxBuilder::setFloat(b.node("Celu", {"x"}, {"celu"}), "alpha", 0.5f);
    OnnxBuilder::setFloat(b.node("ThresholdedRelu", {"x"}, {"thresholded"}), "alpha", 0.3f);
    auto& shrink = b.node("Shrink", {"x"}, {"shrink"});
    OnnxBuilder::setFloat(shrink, "lambd", 0.4f);
    OnnxBuilder::setFloat(shrink, "bias", 0.1f);
    b.node("PRelu", {"x", "slope"}, {"prelu"});
    b.node("Sum", {"celu", "thresholded", "shrink", "prelu"}, {"y3"});
    b.node("IsNaN", {"x"}, {"nan"});
    OnnxBuilder::setInt(b.node("IsInf", {"x"}, {"inf"}), "detect_negative", 0);
    b.node("Or", {"nan", "inf"}, {"odd"});
    OnnxBuilder::setInt(b.node("Cast", {"odd"}, {"oddf"}), "to", onnx::TensorProto::FLOAT);
    b.node("Add", {"x", "oddf"}, {"y4"});
    OnnxBuilder::setInt(b.node("LogSoftmax", {"x"}, {"y5"}), "axis", 1);
    OnnxBuilder::setInt(b.node("Hardmax", {"x"}, {"y6"}), "axis", -1);
    auto& argmax = b.node("ArgMax", {"x"}, {"argmax"});
    OnnxBuilder::setInt(argmax, "axis", 1);
    OnnxBuilder::setInt(argmax, "select_last_index", 1);
    OnnxBuilder::setInt(b.node("Cast", {"argmax"}, {"y7"}), "to", onnx::TensorProto::FLOAT);
    auto& argmin = b.node("ArgMin", {"x"}, {"argmin"});
    OnnxBuilder::setInt(argmin, "axis", 2);
    OnnxBuilder::setInt(argmin, "keepdims", 0);
    OnnxBuilder::setInt(b.node("Cast", {"argmin"}, {"y8"}), "to", onnx::TensorProto::FLOAT);
    OnnxBuilder::setInt(b.node("DepthToSpace", {"x"}, {"space"}), "blocksize", 2);
    OnnxBuilder::setInt(b.node("SpaceToDepth", {"space"}, {"y9"}), "blocksize", 2);
    auto& crd = b.node("DepthToSpace", {"x"}, {"y10"});
    OnnxBuilder::setInt(crd, "blocksize", 2);
    OnnxBuilder::setString(crd, "mode", "CRD");
    auto& lrn = b.node("LRN", {"x"}, {"y11"});
    OnnxBuilder::setInt(lrn, "size", 4);
    OnnxBuilder::setFloat(lrn, "alpha", 1e-3f);
    OnnxBuilder::setFloat(lrn, "bias", 2.0f);
    b.node("MeanVarianceNormalization", {"x"}, {"y12"});
    OnnxBuilder::setInt(b.node("Trilu", {"x", "k"}, {"y13"}), "upper", 0);
    auto& cumsum = b.node("CumSum", {"x", "cum_axis"}, {"y14"});
    OnnxBuilder::setInt(cumsum, "exclusive", 1);
    OnnxBuilder::setInt(cumsum, "reverse", 1);
    OnnxBuilder::setInt(b.node("GatherElements", {"x", "picks"}, {"y15"}), "axis", 2);
    OnnxBuilder::setInt(b.node("Flatten", {"x"}, {"rows"}), "axis", -1);
    OnnxBuilder::setInt(b.node("EyeLike", {"rows"}, {"eye"}), "k", 1);
    b.node("Add", {"rows", "eye"}, {"y16"});
    b.node("Size", {"x"}, {"size"});
    OnnxBuilder::setInt(b.node("Cast", {"size"}, {"sizef"}), "to", onnx::TensorProto::FLOAT);
    b.node("Div", {"x", "sizef"}, {"y17"});
    // Pads of H and W: reflected (2 and 1 before, 1 and 3 after), repeated at the edges.
    b.initializerInt64("hw_pads", {0, 0, 2, 1, 0, 0, 1, 3});
    OnnxBuilder::setString(b.node("Pad", {"x", "hw_pads"}, {"y19"}), "mode", "reflect");
    OnnxBuilder::setString(b.node("Pad", {"x", "hw_pads"}, {"y20"}), "mode", "edge");
    // Rows 5 and -2 (4) of channel 3 replaced, then channel 1 added to.
    b.initializerInt64("nd_rows", {0, 3, 5, 0, 3, -2}, {2, 3});
    b.initializer("nd_rows_new", {2, 6}, [](int64_t i) { return float(i) - 5.5f; });
    b.initializerInt64("nd_channel", {0, 1}, {1, 2});
    b.initializer("nd_channel_add", {1, 6, 6}, 0.25f);
    b.node("ScatterND", {"x", "nd_rows", "nd_rows_new"}, {"scattered"});
    OnnxBuilder::setString(b.node("ScatterND", {"scattered", "nd_channel", "nd_channel_add"}, {"y21"}), "reduction", "add");
    // One-hot rows of the arg-max channel (negative: counted from the end) on axis 1.
    b.initializerInt64("depth", {8}, {});
    b.initializer("on_off", {2}, [](int64_t i) { return i == 0 ? -1.0f : 2.0f; });
    b.initializerInt64("shift", {-8}, {});
    b.node("Add", {"argmax", "shift"}, {"from_end"});
    OnnxBuilder::setInt(b.node("OneHot", {"from_end", "depth", "on_off"}, {"y22"}), "axis", 1);
    // Dynamic quantization as ONNX Runtime's quantize_dynamic writes it: x to uint8 with its own
    // scale and zero point, read by MatMulInteger and by ConvInteger with an asymmetric window.
    std::vector<int64_t> b8, w8;
    for (int64_t i = 0; i < 24; ++i)
        b8.push_back(i * 11 % 255 - 127);
    for (int64_t i = 0; i < 288; ++i)
        w8.push_back(i * 37 % 256);
    b.initializerInts("b8", onnx::TensorProto::INT8, b8, {6, 4}).initializerInts("b8_zero", onnx::TensorProto::INT8, {3}, {});
    b.initializerInts("w8", onnx::TensorProto::UINT8, w8, {4, 8, 3, 3});
    b.initializerInts("w8_zero", onnx::TensorProto::UINT8, {120, 128, 0, 255}, {4});
    b.node("DynamicQuantizeLinear", {"x"}, {"q", "q_scale", "q_zero"});
    b.node("MatMulInteger", {"q", "b8", "q_zero", "b8_zero"}, {"qm"});
    OnnxBuilder::setInt(b.node("Cast", {"qm"}, {"y23"}), "to", onnx::TensorProto::FLOAT);
    auto& convInteger = b.node("ConvInteger", {"q", "w8", "q_zero", "w8_zero"}, {"qc"});
    OnnxBuilder::setInts(convInteger, "pads", {1, 0, 0, 1});
    OnnxBuilder::setInt(b.node("Cast", {"qc"}, {"y24"}), "to", onnx::TensorProto::FLOAT);
    OnnxBuilder::setInt(b.node("Cast", {"q"}, {"qf"}), "to", onnx::TensorProto::FLOAT);
    b.node("Mul", {"qf", "q_scale"}, {"y25"});
    OnnxBuilder::setInt(b.node("Cast", {"x"}, {"like"}), "to", onnx::TensorProto::INT32);
    b.node("CastLike", {"x", "like"}, {"whole"});
    OnnxBuilder::setInt(b.node("Cast", {"whole"}, {"y18"}), "to", onnx::TensorProto::FLOAT);
    for (const char* y : {"y1", "y2", "y3", "y4", "y5", "y6", "y9", "y11", "y12", "y13", "y14", "y17", "y18", "y21", "y25"})
        b.output(y, {1, 8, 6, 6});
    b.output("y7", {1, 1, 6, 6}).output("y8", {1, 8, 6}).output("y10", {1, 2, 12, 12}).output("y15", {1, 8, 2, 6});
    b.output("y16", {48, 6}).output("y19", {1, 8, 9, 10}).output("y20", {1, 8, 9, 10}).output("y22", {1, 8, 1, 6, 6});
    b.output("y23", {1, 8, 6, 4}).output("y24", {1, 4, 5, 5});
    return b.bytes();
}

// Operators of opset 17 and a few more: LayerNormalization with its mean and inverse standard
// deviation read, the three windows (periodic and symmetric), Det of a stack of matrices,
// BitShift of uint8 constants, Squeeze, Unsqueeze, ReduceSum, Split, Tile, CumSum and Resize by
// computed inputs, and DFT.
std::string opset17Model()
{
    OnnxBuilder b(17);
    b.input("x", {2, 3, 3});
    b.initializer("ln_scale", {3, 3}, [](int64_t i) { return 0.5f + 0.1f * float(i); });
    b.initializerInt64("size", {10}, {});
    b.initializerInts("bits", onnx::TensorProto::UINT8, {1, 2, 3, 200}, {4});
    b.initializerInts("shift", onnx::TensorProto::UINT8, {1, 0, 2, 3}, {4});
    OnnxBuilder::setInt(b.node("LayerNormalization", {"x", "ln_scale"}, {"ln", "ln_mean", "ln_inv_std"}), "axis", 1);
    b.node("HannWindow", {"size"}, {"hann"});
    OnnxBuilder::setInt(b.node("HammingWindow", {"size"}, {"hamming"}), "periodic", 0);
    OnnxBuilder::setInt(b.node("BlackmanWindow", {"size"}, {"blackman"}), "output_datatype", onnx::TensorProto::DOUBLE);
    b.node("Det", {"x"}, {"det"});
    OnnxBuilder::setString(b.node("BitShift", {"bits", "shift"}, {"left"}), "direction", "LEFT");
    OnnxBuilder::setString(b.node("BitShift", {"bits", "shift"}, {"right"}), "direction", "RIGHT");
    // Axes, sizes and repeats computed when the code runs (an Identity of a constant here).
    b.initializerInt64("axis_1", {1}).initializerInt64("last", {-1}).initializerInt64("parts", {1, 2});
    b.initializerInt64("repeats", {1, 2, 1});
    for (const char* v : {"axis_1", "last", "parts", "repeats"})
        b.node("Identity", {v}, {std::string("computed_") + v});
    b.node("Unsqueeze", {"x", "computed_axis_1"}, {"unsqueezed"});
    b.node("Squeeze", {"unsqueezed", "computed_axis_1"}, {"squeezed"});
    OnnxBuilder::setInt(b.node("ReduceSum", {"x", "computed_last"}, {"row_sums"}), "keepdims", 0);
    OnnxBuilder::setInt(b.node("Split", {"x", "computed_parts"}, {"part_1", "part_2"}), "axis", 1);
    b.node("Tile", {"x", "computed_repeats"}, {"tiled"});
    auto& cumsum = b.node("CumSum", {"x", "computed_last"}, {"cumsum"});
    OnnxBuilder::setInt(cumsum, "exclusive", 1);
    OnnxBuilder::setInt(cumsum, "reverse", 1);
    b.initializer("scales", {3}, [](int64_t i) { return i == 0 ? 1.0f : 2.0f; }).initializerInt64("sizes", {2, 5, 2});
    b.node("Identity", {"scales"}, {"computed_scales"});
    b.node("Identity", {"sizes"}, {"computed_sizes"});
    OnnxBuilder::setString(b.node("Resize", {"x", "", "computed_scales"}, {"resized_linear"}), "mode", "linear");
    OnnxBuilder::setString(b.node("Resize", {"x", "", "", "computed_sizes"}, {"resized_cubic"}), "mode", "cubic");
    b.output("squeezed", {2, 3, 3}).output("row_sums", {2, 3}).output("part_1", {2, 1, 3}).output("part_2", {2, 2, 3});
    b.output("tiled", {2, 6, 3}).output("cumsum", {2, 3, 3}).output("resized_linear", {2, 6, 6}).output("resized_cubic", {2, 5, 2});
    b.output("ln", {2, 3, 3}).output("ln_mean", {2, 1, 1}).output("ln_inv_std", {2, 1, 1}).output("hann", {10});
    b.output("hamming", {10}).output("blackman", {10}, onnx::TensorProto::DOUBLE).output("det", {2});
    b.output("left", {4}, onnx::TensorProto::UINT8).output("right", {4}, onnx::TensorProto::UINT8);
    // DFT of x as a real signal [2, 3, 3, 1]: along axis 1, along -2 (the signal's last axis)
    // one-sided and zero-padded to 4, and the inverse of the first.
    b.initializerInt64("signal_shape", {2, 3, 3, 1}).initializerInt64("four", {4}, {});
    b.node("Reshape", {"x", "signal_shape"}, {"signal"});
    b.node("DFT", {"signal"}, {"spectrum"});
    auto& onesided = b.node("DFT", {"signal", "four"}, {"half_spectrum"});
    OnnxBuilder::setInt(onesided, "axis", -2);
    OnnxBuilder::setInt(onesided, "onesided", 1);
    OnnxBuilder::setInt(b.node("DFT", {"spectrum"}, {"back"}), "inverse", 1);
    b.output("spectrum", {2, 3, 3, 2}).output("half_spectrum", {2, 3, 3, 2}).output("back", {2, 3, 3, 2});
    return b.bytes();
}

// The training losses (opset 13): NegativeLogLikelihoodLoss on log-probabilities with class
// weights and an ignored class (mean), unweighted (none), and SoftmaxCrossEntropyLoss (sum) with
// its log-probabilities read too.
std::string lossesModel()
{
    OnnxBuilder b;
    b.input("x", {3, 5, 2});
    b.initializerInt64("target", {0, 4, 2, 1, 1, 3}, {3, 2});
    b.initializer("class_weight", {5}, [](int64_t i) { return 0.5f + 0.25f * float(i); });
    OnnxBuilder::setInt(b.node("LogSoftmax", {"x"}, {"log_p"}), "axis", 1);
    OnnxBuilder::setInt(b.node("NegativeLogLikelihoodLoss", {"log_p", "target", "class_weight"}, {"nll_mean"}), "ignore_index", 1);
    OnnxBuilder::setString(b.node("NegativeLogLikelihoodLoss", {"log_p", "target"}, {"nll_none"}), "reduction", "none");
    OnnxBuilder::setString(b.node("SoftmaxCrossEntropyLoss", {"x", "target", "class_weight"}, {"sce_sum", "sce_log_p"}),
                           "reduction", "sum");
    b.output("nll_mean", {}).output("nll_none", {3, 2}).output("sce_sum", {}).output("sce_log_p", {3, 5, 2});
    return b.bytes();
}

// Upsample as opset 9 writes it (darknet's and older exporters' nearest upsampling by 2 and 3,
// and PyTorch 1.0-1.2's bilinear, whose coordinates are asymmetric), and by computed scales.
std::string upsampleModel()
{
    OnnxBuilder b(9);
    b.input("x", {1, 3, 5, 4});
    b.initializer("scales", {4}, [](int64_t i) { return i < 2 ? 1.0f : float(i); });
    b.node("Upsample", {"x", "scales"}, {"y"});
    OnnxBuilder::setString(b.node("Upsample", {"x", "scales"}, {"y_linear"}), "mode", "linear");  // asymmetric coordinates
    b.initializer("one", {}, 1.0f);
    b.node("Add", {"scales", "one"}, {"computed_scales"});  // 2, 2, 3, 4
    b.node("Upsample", {"x", "computed_scales"}, {"y_computed"});
    OnnxBuilder::setString(b.node("Upsample", {"x", "computed_scales"}, {"y_computed_linear"}), "mode", "linear");
    b.output("y", {1, 3, 10, 12}).output("y_linear", {1, 3, 10, 12});
    b.output("y_computed", {2, 6, 15, 16}).output("y_computed_linear", {2, 6, 15, 16});
    return b.bytes();
}

// Resize as PyTorch exports F.interpolate and as other exporters write it: bilinear with
// half_pixel sizes, with pytorch_half_pixel, with align_corners scales, and nearest with
// asymmetric coordinates and floor; linear and nearest in the other modes and roundings, cubic;
// tf_crop_and_resize.
std::string resizeModel()
{
    OnnxBuilder b;
    b.input("x", {1, 3, 5, 7});
    b.initializerInt64("sizes", {1, 3, 10, 14}).initializerInt64("odd_sizes", {1, 3, 8, 3});
    b.initializer("scales", {4}, [](int64_t i) { return i < 2 ? 1.0f : float(i); });  // 1, 1, 2, 3
    auto mode = [](onnx::NodeProto& n, const std::string& m, const std::string& coord, const std::string& nearest = {}) {
        OnnxBuilder::setString(n, "mode", m);
        OnnxBuilder::setString(n, "coordinate_transformation_mode", coord);
        if (!nearest.empty())
            OnnxBuilder::setString(n, "nearest_mode", nearest);
    };
    mode(b.node("Resize", {"x", "", "", "sizes"}, {"y1"}), "linear", "half_pixel");
    mode(b.node("Resize", {"x", "", "", "odd_sizes"}, {"y2"}), "linear", "pytorch_half_pixel");
    mode(b.node("Resize", {"x", "", "scales"}, {"y3"}), "linear", "align_corners");
    mode(b.node("Resize", {"x", "", "scales"}, {"y4"}), "nearest", "asymmetric", "floor");
    // Linear in the modes PyTorch's bilinear upsampling lacks: the onnx_resize_linear helper.
    b.initializerInt64("one_row", {1, 3, 1, 4});
    mode(b.node("Resize", {"x", "", "scales"}, {"y5"}), "linear", "asymmetric");
    mode(b.node("Resize", {"x", "", "", "odd_sizes"}, {"y6"}), "linear", "tf_half_pixel_for_nn");
    mode(b.node("Resize", {"x", "", "", "one_row"}, {"y7"}), "linear", "pytorch_half_pixel");
    // Nearest in the roundings F.interpolate lacks (ONNX's default: half_pixel, round_prefer_floor).
    b.node("Resize", {"x", "", "", "odd_sizes"}, {"y8"});
    mode(b.node("Resize", {"x", "", "scales"}, {"y9"}), "nearest", "align_corners", "round_prefer_ceil");
    mode(b.node("Resize", {"x", "", "", "odd_sizes"}, {"y10"}), "nearest", "tf_half_pixel_for_nn", "ceil");
    mode(b.node("Resize", {"x", "", "scales"}, {"y11"}), "cubic", "half_pixel");  // Keys' kernel, A = -0.75
    auto& cubic = b.node("Resize", {"x", "", "", "odd_sizes"}, {"y12"});
    mode(cubic, "cubic", "align_corners");
    OnnxBuilder::setFloat(cubic, "cubic_coeff_a", -0.5f);
    OnnxBuilder::setInt(cubic, "exclude_outside", 1);
    b.output("y1", {1, 3, 10, 14}).output("y2", {1, 3, 8, 3}).output("y3", {1, 3, 10, 21}).output("y4", {1, 3, 10, 21});
    b.output("y5", {1, 3, 10, 21}).output("y6", {1, 3, 8, 3}).output("y7", {1, 3, 1, 4}).output("y8", {1, 3, 8, 3});
    b.output("y9", {1, 3, 10, 21}).output("y10", {1, 3, 8, 3}).output("y11", {1, 3, 10, 21}).output("y12", {1, 3, 8, 3});
    // tf_crop_and_resize: a region reaching past the last column (extrapolated), linear to sizes;
    // a computed region, nearest by scales; cubic to one row (the region's middle).
    b.initializer("roi", {8}, [](int64_t i) {
        const float r[8] = {0, 0, 0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
        return r[i];
    });
    b.initializer("half", {}, 0.5f);
    b.node("Mul", {"roi", "half"}, {"half_roi"});
    auto& cropLinear = b.node("Resize", {"x", "roi", "", "odd_sizes"}, {"y13"});
    mode(cropLinear, "linear", "tf_crop_and_resize");
    OnnxBuilder::setFloat(cropLinear, "extrapolation_value", 9.0f);
    mode(b.node("Resize", {"x", "half_roi", "scales"}, {"y14"}), "nearest", "tf_crop_and_resize");
    mode(b.node("Resize", {"x", "roi", "", "one_row"}, {"y15"}), "cubic", "tf_crop_and_resize");
    b.output("y13", {1, 3, 8, 3}).output("y14", {1, 3, 10, 21}).output("y15", {1, 3, 1, 4});
    return b.bytes();
}

// A Split whose two parts start two branches of convolutions, which the schedule gives to
// two workers: without clones the second part is published by the worker computing the Split.
std::string splitBranchesModel()
{
    OnnxBuilder b;
    b.input("x", {1, 16, 28, 28});
    b.initializerInt64("halves", {8, 8});
    OnnxBuilder::setInt(b.node("Split", {"x", "halves"}, {"left", "right"}, "split"), "axis", 1);
    for (const std::string side : {"left", "right"}) {
        std::string in = side;
        for (int k = 0; k < 3; ++k) {
            const std::string w = side + "_w" + std::to_string(k), out = side + "_c" + std::to_string(k);
            b.initializer(w, {8, 8, 3, 3}, [k](int64_t i) { return float((i * 7 + k) % 11 - 5) * 0.02f; });
            OnnxBuilder::setInts(b.node("Conv", {in, w}, {out}, side + "_conv" + std::to_string(k)), "pads", {1, 1, 1, 1});
            in = out;
        }
    }
    OnnxBuilder::setInt(b.node("Concat", {"left_c2", "right_c2"}, {"y"}), "axis", 1);
    b.output("y", {1, 16, 28, 28});
    return b.bytes();
}

// Recurrent layers whose final states are read: a bidirectional LSTM's Y, Y_h and Y_c (no
// initial states given), a GRU of which only Y_h is read, and a GRU and an RNN that give only
// Y_h (their Y left out, as tf2onnx and ONNX's own tests write them). And the layers PyTorch's
// kernels do not compute, step by step: a bidirectional GRU whose reset gate comes before its
// linear transformation (ONNX's default) over ragged rows (one of length 0) from initial states,
// a reverse LSTM with peepholes in layout 1 (batch first), and an RNN (Relu) whose weights are
// computed; a GRU of PyTorch's kind in layout 1 runs on its kernel; an LSTM, a GRU and an RNN
// with a clip, other activations and input_forget. And ReverseSequence, time axis first and
// batch axis first.
std::string recurrentStatesModel()
{
    OnnxBuilder b(14);
    b.input("x", {6, 2, 5});
    auto weights = [&](const std::string& prefix, int64_t directions, int64_t gates, int64_t hidden) {
        b.initializer(prefix + "w", {directions, gates * hidden, 5}, [](int64_t i) { return float(i % 13 - 6) * 0.05f; });
        b.initializer(prefix + "r", {directions, gates * hidden, hidden}, [](int64_t i) { return float(i % 7 - 3) * 0.07f; });
        b.initializer(prefix + "b", {directions, 2 * gates * hidden}, [](int64_t i) { return float(i % 5 - 2) * 0.1f; });
    };
    auto states = [&](const std::string& name, std::vector<int64_t> dims) {
        b.initializer(name, std::move(dims), [](int64_t i) { return float(i % 4) * 0.2f - 0.3f; });
    };
    weights("lstm_", 2, 4, 3);
    weights("gru_", 1, 3, 4);
    auto& lstm = b.node("LSTM", {"x", "lstm_w", "lstm_r", "lstm_b"}, {"y", "y_h", "y_c"}, "lstm");
    OnnxBuilder::setInt(lstm, "hidden_size", 3);
    OnnxBuilder::setString(lstm, "direction", "bidirectional");
    weights("rnn_", 2, 1, 4);
    for (const char* y : {"g_y", ""}) {  // g_y: never read
        const std::string h = *y ? "g_h" : "g2_h";
        auto& gru = b.node("GRU", {"x", "gru_w", "gru_r", "gru_b"}, {y, h});
        OnnxBuilder::setInt(gru, "hidden_size", 4);
        OnnxBuilder::setInt(gru, "linear_before_reset", 1);
    }
    auto& rnn = b.node("RNN", {"x", "rnn_w", "rnn_r", "rnn_b"}, {"", "r_h"}, "rnn");
    OnnxBuilder::setInt(rnn, "hidden_size", 4);
    OnnxBuilder::setString(rnn, "direction", "bidirectional");
    b.output("y", {6, 2, 2, 3}).output("y_h", {2, 2, 3}).output("y_c", {2, 2, 3}).output("g_h", {1, 2, 4});
    b.output("g2_h", {1, 2, 4}).output("r_h", {2, 2, 4});

    weights("reset_", 2, 3, 4);
    b.initializerInts("reset_lens", onnx::TensorProto::INT32, {4, 0}, {2});
    states("reset_h0", {2, 2, 4});
    auto& resetFirst = b.node("GRU", {"x", "reset_w", "reset_r", "reset_b", "reset_lens", "reset_h0"},
                              {"reset_y", "reset_h"}, "gru_reset_first");
    OnnxBuilder::setInt(resetFirst, "hidden_size", 4);
    OnnxBuilder::setString(resetFirst, "direction", "bidirectional");
    b.output("reset_y", {6, 2, 2, 4}).output("reset_h", {2, 2, 4});

    OnnxBuilder::setInts(b.node("Transpose", {"x"}, {"x_batch_first"}), "perm", {1, 0, 2});
    weights("peep_", 1, 4, 3);
    b.initializer("peep_p", {1, 9}, [](int64_t i) { return float(i % 5 - 2) * 0.15f; });
    states("peep_h0", {2, 1, 3});
    states("peep_c0", {2, 1, 3});
    auto& peep = b.node("LSTM", {"x_batch_first", "peep_w", "peep_r", "peep_b", "", "peep_h0", "peep_c0", "peep_p"},
                        {"peep_y", "peep_h", "peep_c"}, "lstm_peepholes");
    OnnxBuilder::setInt(peep, "hidden_size", 3);
    OnnxBuilder::setString(peep, "direction", "reverse");
    OnnxBuilder::setInt(peep, "layout", 1);
    b.output("peep_y", {2, 6, 1, 3}).output("peep_h", {2, 1, 3}).output("peep_c", {2, 1, 3});

    weights("scaled_", 1, 1, 4);
    b.initializer("two", {1}, 2.0f);
    b.node("Mul", {"scaled_w", "two"}, {"computed_w"});
    auto& computed = b.node("RNN", {"x", "computed_w", "scaled_r", "scaled_b"}, {"computed_y"}, "rnn_computed");
    OnnxBuilder::setInt(computed, "hidden_size", 4);
    OnnxBuilder::setStrings(computed, "activations", {"Relu"});
    b.output("computed_y", {6, 1, 2, 4});

    states("first_h0", {2, 1, 4});
    auto& batchFirst = b.node("GRU", {"x_batch_first", "gru_w", "gru_r", "gru_b", "", "first_h0"}, {"first_y"});
    OnnxBuilder::setInt(batchFirst, "hidden_size", 4);
    OnnxBuilder::setInt(batchFirst, "linear_before_reset", 1);
    OnnxBuilder::setInt(batchFirst, "layout", 1);
    b.output("first_y", {2, 6, 1, 4});

    // The cell options only the step-by-step helpers take: a clip of the gates' inputs, any of
    // ONNX's activations with their alphas and betas (taken in order by the functions that use
    // them, direction after direction), an LSTM's input_forget.
    auto& clipped = b.node("LSTM", {"x", "peep_w", "peep_r", "peep_b"}, {"clip_y", "clip_h"}, "lstm_cell_options");
    OnnxBuilder::setInt(clipped, "hidden_size", 3);
    OnnxBuilder::setFloat(clipped, "clip", 0.3f);
    OnnxBuilder::setInt(clipped, "input_forget", 1);
    OnnxBuilder::setStrings(clipped, "activations", {"HardSigmoid", "ScaledTanh", "Softsign"});
    OnnxBuilder::setFloats(clipped, "activation_alpha", {0.3f, 1.5f});
    OnnxBuilder::setFloats(clipped, "activation_beta", {0.4f, 0.8f});
    auto& gruOptions = b.node("GRU", {"x", "reset_w", "reset_r", "reset_b"}, {"gru_options_y"}, "gru_cell_options");
    OnnxBuilder::setInt(gruOptions, "hidden_size", 4);
    OnnxBuilder::setString(gruOptions, "direction", "bidirectional");
    OnnxBuilder::setFloat(gruOptions, "clip", 0.5f);
    OnnxBuilder::setStrings(gruOptions, "activations", {"Sigmoid", "LeakyRelu", "HardSigmoid", "Tanh"});
    OnnxBuilder::setFloats(gruOptions, "activation_alpha", {0.2f, 0.25f});
    OnnxBuilder::setFloats(gruOptions, "activation_beta", {0.45f});
    auto& rnnOptions = b.node("RNN", {"x", "rnn_w", "rnn_r", "rnn_b"}, {"rnn_options_y"}, "rnn_cell_options");
    OnnxBuilder::setInt(rnnOptions, "hidden_size", 4);
    OnnxBuilder::setString(rnnOptions, "direction", "bidirectional");
    OnnxBuilder::setStrings(rnnOptions, "activations", {"Elu", "Softplus"});
    OnnxBuilder::setFloats(rnnOptions, "activation_alpha", {0.7f});
    b.output("clip_y", {6, 1, 2, 3}).output("clip_h", {1, 2, 3}).output("gru_options_y", {6, 2, 2, 4});
    b.output("rnn_options_y", {6, 2, 2, 4});

    b.initializerInt64("reverse_lens", {3, 6});
    b.node("ReverseSequence", {"x", "reverse_lens"}, {"reversed"});
    auto& batchAxis = b.node("ReverseSequence", {"x_batch_first", "reverse_lens"}, {"reversed_batch_first"});
    OnnxBuilder::setInt(batchAxis, "time_axis", 1);
    OnnxBuilder::setInt(batchAxis, "batch_axis", 0);
    b.output("reversed", {6, 2, 5}).output("reversed_batch_first", {2, 6, 5});
    return b.bytes();
}

// Indices computed when the model runs, as detectors and packed sequences compute them: TopK
// (largest, and smallest among ties, which ONNX orders by index), Gather at its indices and at
// computed and constant indices that count from the end, GatherND (batch_dims 0, 1 and 2, the
// last at a sort's indices), ScatterElements at computed and
// constant indices (repeated, negative) with each reduction, and recurrent layers over ragged
// sequences (a row of length 0, initial states given). And ONNX's GroupNormalization (opset 18:
// its scale and bias per group), which the generated code repeats for each group's channels;
// Compress, Unique, MaxPool's indices and MaxUnpool.
std::string computedIndicesModel()
{
    OnnxBuilder b(18);
    b.input("x", {1, 12, 5});
    b.initializerInt64("k4", {4}).initializerInt64("k3", {3}).initializerInt64("one", {1}, {});
    b.initializerInt64("i_negative", {-1, 0, 3, -12}, {2, 2});
    b.initializerInt64("nd_pairs", {0, 3, 0, -1}, {2, 2}).initializerInt64("nd_rows", {2, -1, 0}, {1, 3, 1});
    b.initializerInt64("last_axis", {-1});
    b.initializerInt64("i_repeated", [] {
        std::vector<int64_t> v;
        for (int64_t i = 0; i < 24; ++i)
            v.push_back(i % 3 == 0 ? -1 : i % 5 - 2);  // in [-5, 5), repeated in each row
        return v;
    }(), {1, 12, 2});
    b.initializer("updates", {1, 12, 2}, [](int64_t i) { return float(i % 7) * 0.25f - 0.5f; });
    b.initializerInt64("sequence", {4, 3, 5}).initializerInt64("lstm_lens", {4, 0, 2}).initializerInt64("gru_lens", {1, 4, 3});
    b.initializer("lstm_w", {2, 12, 5}, [](int64_t i) { return float(i % 13 - 6) * 0.05f; });
    b.initializer("lstm_r", {2, 12, 3}, [](int64_t i) { return float(i % 7 - 3) * 0.07f; });
    b.initializer("lstm_b", {2, 24}, [](int64_t i) { return float(i % 5 - 2) * 0.1f; });
    b.initializer("lstm_h0", {2, 3, 3}, [](int64_t i) { return float(i % 4) * 0.2f - 0.3f; });
    b.initializer("gru_w", {1, 12, 5}, [](int64_t i) { return float(i % 11 - 5) * 0.06f; });
    b.initializer("gru_r", {1, 12, 4}, [](int64_t i) { return float(i % 9 - 4) * 0.05f; });
    b.node("Relu", {"x"}, {"r"});
    OnnxBuilder::setInt(b.node("TopK", {"x", "k4"}, {"v1", "i1"}), "axis", 1);
    OnnxBuilder::setInt(b.node("TopK", {"r", "k3"}, {"v2", "i2"}), "largest", 0);  // the last axis; zeros tie
    OnnxBuilder::setInt(b.node("Gather", {"x", "i1"}, {"g1"}), "axis", 1);
    b.node("Neg", {"i2"}, {"n2"});
    b.node("Sub", {"n2", "one"}, {"from_end"});  // -i - 1: the same entries, counted from the end
    OnnxBuilder::setInt(b.node("Gather", {"x", "from_end"}, {"g2"}), "axis", 2);
    OnnxBuilder::setInt(b.node("Gather", {"x", "i_negative"}, {"g3"}), "axis", 1);
    b.node("GatherND", {"x", "nd_pairs"}, {"nd1"});
    OnnxBuilder::setInt(b.node("GatherND", {"x", "nd_rows"}, {"nd2"}), "batch_dims", 1);
    b.node("Unsqueeze", {"i2", "last_axis"}, {"i2_column"});
    OnnxBuilder::setInt(b.node("GatherND", {"r", "i2_column"}, {"nd3"}), "batch_dims", 2);
    b.node("Neg", {"v1"}, {"nv1"});
    OnnxBuilder::setInt(b.node("ScatterElements", {"x", "i1", "nv1"}, {"s1"}), "axis", 1);
    auto scatter = [&](const std::string& indices, const std::string& updates, const std::string& out, const std::string& reduction) {
        auto& n = b.node("ScatterElements", {"x", indices, updates}, {out});
        OnnxBuilder::setInt(n, "axis", 2);
        OnnxBuilder::setString(n, "reduction", reduction);
    };
    scatter("i_repeated", "updates", "s2", "add");
    scatter("i_repeated", "updates", "s3", "mul");
    scatter("i2", "v2", "s4", "max");
    b.node("Neg", {"v2"}, {"nv2"});
    scatter("i2", "nv2", "s5", "min");
    b.node("Reshape", {"x", "sequence"}, {"seq"});
    auto& lstm = b.node("LSTM", {"seq", "lstm_w", "lstm_r", "lstm_b", "lstm_lens", "lstm_h0"}, {"y", "y_h", "y_c"}, "lstm");
    OnnxBuilder::setInt(lstm, "hidden_size", 3);
    OnnxBuilder::setString(lstm, "direction", "bidirectional");
    auto& gru = b.node("GRU", {"seq", "gru_w", "gru_r", "", "gru_lens"}, {"g_y", "g_h"}, "gru");
    OnnxBuilder::setInt(gru, "hidden_size", 4);
    OnnxBuilder::setInt(gru, "linear_before_reset", 1);
    b.output("v1", {1, 4, 5}).output("i1", {1, 4, 5}, onnx::TensorProto::INT64);
    b.output("v2", {1, 12, 3}).output("i2", {1, 12, 3}, onnx::TensorProto::INT64);
    b.output("g1", {1, 1, 4, 5, 5}).output("g2", {1, 12, 1, 12, 3}).output("g3", {1, 2, 2, 5});
    b.output("nd1", {2, 5}).output("nd2", {1, 3, 5}).output("nd3", {1, 12, 3});
    b.output("s1", {1, 12, 5}).output("s2", {1, 12, 5}).output("s3", {1, 12, 5}).output("s4", {1, 12, 5});
    b.output("s5", {1, 12, 5}).output("y", {4, 2, 3, 3}).output("y_h", {2, 3, 3}).output("y_c", {2, 3, 3});
    b.output("g_y", {4, 1, 3, 4}).output("g_h", {1, 3, 4});
    b.initializer("gn_scale", {4}, test::groupNormScale).initializer("gn_bias", {4}, test::groupNormBias);
    OnnxBuilder::setInt(b.node("GroupNormalization", {"x", "gn_scale", "gn_bias"}, {"gn"}), "num_groups", 4);
    b.output("gn", {1, 12, 5});

    // Compress by a computed condition along an axis and over every element (the condition
    // shorter than the elements), Unique (sorted along an axis; in order of appearance, every
    // element), MaxPool's indices (row- and column-major) and MaxUnpool to the pooled input's
    // shape and to a larger output_shape.
    b.initializerInt64("axes02", {0, 2}).initializer("zero_f", {}, 0.0f).initializer("three", {}, 3.0f);
    OnnxBuilder::setInt(b.node("ReduceSum", {"x", "axes02"}, {"row_sums"}), "keepdims", 0);
    b.node("Greater", {"row_sums", "zero_f"}, {"rows_kept"});
    OnnxBuilder::setInt(b.node("Compress", {"x", "rows_kept"}, {"compressed"}), "axis", 1);
    b.node("Compress", {"x", "rows_kept"}, {"compressed_flat"});
    b.node("Mul", {"x", "three"}, {"x3"});
    b.node("Floor", {"x3"}, {"steps"});
    OnnxBuilder::setInt(b.node("Unique", {"steps"}, {"u_y", "u_first", "u_inverse", "u_counts"}), "axis", -1);
    OnnxBuilder::setInt(b.node("Unique", {"steps"}, {"f_y", "f_first", "f_inverse", "f_counts"}), "sorted", 0);
    b.initializerInt64("grid_shape", {1, 15, 2, 2}).initializerInt64("larger_shape", {1, 15, 3, 3});
    b.node("Reshape", {"x", "grid_shape"}, {"grid"});
    auto pooled = [&](const std::string& values, const std::string& indices, int64_t stride) -> onnx::NodeProto& {
        auto& n = b.node("MaxPool", {"grid"}, {values, indices});
        OnnxBuilder::setInts(n, "kernel_shape", {2, 2});
        OnnxBuilder::setInts(n, "strides", {stride, stride});
        return n;
    };
    pooled("p_values", "p_indices", 2);
    OnnxBuilder::setInt(pooled("c_values", "c_indices", 1), "storage_order", 1);
    for (const char* out : {"unpooled", "unpooled_to_shape"}) {
        const bool toShape = std::string(out) == "unpooled_to_shape";
        auto& n = toShape ? b.node("MaxUnpool", {"p_values", "p_indices", "larger_shape"}, {out})
                          : b.node("MaxUnpool", {"p_values", "p_indices"}, {out});
        OnnxBuilder::setInts(n, "kernel_shape", {2, 2});
        OnnxBuilder::setInts(n, "strides", {2, 2});
    }
    b.output("compressed", {1, -1, 5}).output("compressed_flat", {-1});
    b.output("u_y", {1, 12, -1}).output("f_y", {-1});
    for (const char* u : {"u", "f"}) {
        for (const char* part : {"_first", "_inverse", "_counts"})
            b.output(u + std::string(part), {-1}, onnx::TensorProto::INT64);
    }
    b.output("c_values", {1, 15, 1, 1}).output("c_indices", {1, 15, 1, 1}, onnx::TensorProto::INT64);
    b.output("unpooled", {1, 15, 2, 2}).output("unpooled_to_shape", {1, 15, 3, 3});
    return b.bytes();
}

// Shapes and bounds computed when the model runs, as detectors compute them: Reshape, Expand,
// ConstantOfShape and Slice (a negative step) from a Shape, NonZero, Range of integers and of
// floats, ReduceProd (several axes; every axis into one number), comparisons, rounding, integer
// Div (truncating) and Mod (both signs), Xor, operators on a tensor whose rank is known only
// when the code runs, and the composed reductions (L1, L2, sum of squares, log-sum,
// log-sum-exp; one over every axis, one a no-op without axes), and Pad by computed pads and on
// the axes opset 18 names.
std::string computedShapesModel()
{
    OnnxBuilder b(18);
    b.input("x", {1, 4, 6});
    b.initializerInt64("zero", {0}).initializerInt64("minus_one", {-1}).initializerInt64("two", {2});
    b.initializerInt64("i1", {1}).initializerInt64("i2", {2}).initializerInt64("i3", {3}).initializerInt64("far", {-100});
    b.initializerInt64("axis2", {2}).initializerInt64("back2", {-2}).initializerInt64("axes12", {1, 2});
    b.initializerInt64("first", {0}, {}).initializerInt64("five", {5}, {}).initializerInt64("columns", {0, 1});
    b.initializer("bias", {6}, [](int64_t i) { return float(i) * 0.5f - 1.0f; });
    b.initializer("f_start", {}, -1.5f).initializer("f_step", {}, 0.25f).initializer("scale", {}, 2.5f);
    b.initializer("zero_f", {}, 0.0f);
    b.node("Shape", {"x"}, {"shape"});
    OnnxBuilder::setInt(b.node("Concat", {"zero", "minus_one", "two"}, {"target"}), "axis", 0);
    b.node("Reshape", {"x", "target"}, {"r1"});  // [1, 12, 2], known when the code runs
    b.node("Expand", {"bias", "shape"}, {"e1"});
    OnnxBuilder::setFloatTensor(b.node("ConstantOfShape", {"shape"}, {"c1"}), "value", {1}, {2.5f});
    b.node("Slice", {"shape", "i1", "i2"}, {"k"});  // [4]
    b.node("Slice", {"x", "k", "far", "axis2", "back2"}, {"sl1"});  // columns 4, 2, 0
    b.node("Slice", {"x", "i1", "k", "i1"}, {"sl2"});               // rows 1 to 3
    b.node("Greater", {"x", "zero_f"}, {"positive"});
    b.node("NonZero", {"positive"}, {"nz"});
    b.node("GreaterOrEqual", {"x", "zero_f"}, {"ge"});
    b.node("LessOrEqual", {"x", "zero_f"}, {"le"});
    b.node("And", {"ge", "le"}, {"zeros"});
    OnnxBuilder::setInt(b.node("Cast", {"ge"}, {"ge_f"}), "to", onnx::TensorProto::FLOAT);
    OnnxBuilder::setInt(b.node("Cast", {"zeros"}, {"zeros_f"}), "to", onnx::TensorProto::FLOAT);
    b.node("Add", {"ge_f", "zeros_f"}, {"cmp"});
    b.node("Mul", {"x", "scale"}, {"scaled"});
    b.node("Floor", {"scaled"}, {"fl"});
    b.node("Ceil", {"scaled"}, {"ce"});
    b.node("Round", {"scaled"}, {"ro"});
    b.node("Add", {"fl", "ce"}, {"flce"});
    b.node("Add", {"flce", "ro"}, {"rounded"});
    OnnxBuilder::setInt(b.node("ReduceProd", {"x", "axes12"}, {"p1"}), "keepdims", 0);
    OnnxBuilder::setInt(b.node("ReduceProd", {"shape"}, {"count"}), "keepdims", 0);  // 24
    b.node("Range", {"first", "count", "five"}, {"rg"});
    b.node("Neg", {"count"}, {"minus_count"});  // -24
    b.node("Div", {"minus_count", "five"}, {"quotient"});                     // -4, not -5
    b.node("Mod", {"minus_count", "five"}, {"remainder"});                    // 1: the divisor's sign
    OnnxBuilder::setInt(b.node("Mod", {"minus_count", "five"}, {"fmod"}), "fmod", 1);  // -4: the dividend's
    OnnxBuilder::setInt(b.node("Mod", {"scaled", "scale"}, {"float_mod"}), "fmod", 1);
    b.node("Xor", {"ge", "positive"}, {"xor"});  // true where x is 0
    OnnxBuilder::setInt(b.node("Cast", {"xor"}, {"xor_f"}), "to", onnx::TensorProto::FLOAT);
    OnnxBuilder::setInt(b.node("ReduceMax", {"x"}, {"top"}), "keepdims", 0);
    b.node("Range", {"f_start", "top", "f_step"}, {"rf"});
    // r1 again, but through a target cut to the count of nonzeros (more than 3), so that its
    // rank is known only when the code runs.
    b.node("Shape", {"nz"}, {"nz_shape"});
    b.node("Slice", {"nz_shape", "i1", "i2"}, {"nonzeros"});
    b.node("Slice", {"target", "zero", "nonzeros"}, {"cut"});
    b.node("Reshape", {"x", "cut"}, {"r2"});
    OnnxBuilder::setInt(b.node("Gather", {"r2", "columns"}, {"g1"}), "axis", 1);
    b.node("Unsqueeze", {"r2", "zero"}, {"u0"});
    b.node("Unsqueeze", {"u0", "minus_one"}, {"u1"});  // the output's last axis
    b.node("Squeeze", {"u1", "minus_one"}, {"q0"});
    b.node("Squeeze", {"q0", "zero"}, {"q1"});
    b.node("Flatten", {"q1"}, {"f1"});
    b.node("Softmax", {"r2"}, {"sm"});
    OnnxBuilder::setInt(b.node("Concat", {"sm", "r1"}, {"cat"}), "axis", -1);
    // A Pad by constant pads (which give the rank) and a Resize to sizes joined from the input's
    // own (as F.interpolate exports them) of that value.
    b.initializerInt64("pads_r2", {0, 1, 0, 0, 0, 1}).initializerInt64("four_columns", {4});
    b.node("Pad", {"r2", "pads_r2"}, {"padded_r2"});
    b.node("Shape", {"r2"}, {"r2_shape"});
    b.node("Slice", {"r2_shape", "zero", "two"}, {"r2_leading"});
    OnnxBuilder::setInt(b.node("Concat", {"r2_leading", "four_columns"}, {"r2_sizes"}), "axis", 0);
    OnnxBuilder::setString(b.node("Resize", {"r2", "", "", "r2_sizes"}, {"resized_r2"}), "mode", "linear");
    b.output("padded_r2", {1, 13, 3}).output("resized_r2", {1, 12, 4});
    b.output("e1", {1, 4, 6}).output("c1", {1, 4, 6}).output("sl1", {1, 4, 3}).output("sl2", {1, 3, 6});
    b.output("nz", {3, -1}, onnx::TensorProto::INT64).output("cmp", {1, 4, 6}).output("rounded", {1, 4, 6});
    b.output("p1", {1}).output("rg", {5}, onnx::TensorProto::INT64).output("rf", {-1});
    b.output("g1", {1, 2, 2}).output("f1", {1, 24}).output("cat", {1, 12, 4});
    for (const char* integer : {"quotient", "remainder", "fmod"})
        b.output(integer, {}, onnx::TensorProto::INT64);
    b.output("float_mod", {1, 4, 6}).output("xor_f", {1, 4, 6});
    b.node("ReduceL2", {"x", "axes12"}, {"l2"});
    OnnxBuilder::setInt(b.node("ReduceL1", {"x", "axis2"}, {"l1"}), "keepdims", 0);
    OnnxBuilder::setInt(b.node("ReduceSumSquare", {"x"}, {"sum_squares"}), "keepdims", 0);
    b.node("ReduceLogSum", {"l1", "i1"}, {"log_sum"});
    b.node("ReduceLogSumExp", {"x", "minus_one"}, {"log_sum_exp"});
    OnnxBuilder::setInt(b.node("ReduceSumSquare", {"x"}, {"kept"}), "noop_with_empty_axes", 1);
    b.output("l2", {1, 1, 1}).output("l1", {1, 4}).output("sum_squares", {}).output("log_sum", {1, 1});
    b.output("log_sum_exp", {1, 4, 1}).output("kept", {1, 4, 6});
    // Pad by computed pads (one negative) with a computed value, reflect by computed pads, and
    // pads on the axes opset 18 names: constant pads on constant axes out of order, edge on
    // computed axes (of integers); reflect of integers by constant pads on the channels.
    auto concat = [&](std::initializer_list<std::string> in, const std::string& out) {
        OnnxBuilder::setInt(b.node("Concat", in, {out}), "axis", 0);
    };
    concat({"zero", "minus_one", "i2", "zero", "i1", "i1"}, "pads_c");
    OnnxBuilder::setInt(b.node("ReduceMax", {"x"}, {"largest"}), "keepdims", 0);
    b.node("Pad", {"x", "pads_c", "largest"}, {"pad_c"});
    concat({"zero", "zero", "i2", "zero", "zero", "i1"}, "pads_r");
    OnnxBuilder::setString(b.node("Pad", {"x", "pads_r"}, {"pad_r"}), "mode", "reflect");
    b.initializerInt64("pads_20", {1, 0, 2, 0}).initializerInt64("axes_20", {2, 0});
    b.node("Pad", {"x", "pads_20", "", "axes_20"}, {"pad_a"});
    concat({"i1", "i2"}, "pads_e");
    b.node("Sub", {"minus_one", "zero"}, {"axes_e"});
    b.initializer("hundred", {}, 100.0f);
    b.node("Mul", {"x", "hundred"}, {"x100"});
    OnnxBuilder::setInt(b.node("Cast", {"x100"}, {"x_int"}), "to", onnx::TensorProto::INT32);
    OnnxBuilder::setString(b.node("Pad", {"x_int", "pads_e", "", "axes_e"}, {"pad_e"}), "mode", "edge");
    b.output("pad_c", {1, 4, 9}).output("pad_r", {1, 4, 9}).output("pad_a", {1, 4, 9});
    b.output("pad_e", {1, 4, 9}, onnx::TensorProto::INT32);
    b.initializerInt64("pads_channels", {0, 1, 0, 0, 1, 0});  // constant, on axis 1: no ATen pad takes it
    OnnxBuilder::setString(b.node("Pad", {"x_int", "pads_channels"}, {"pad_channels"}), "mode", "reflect");
    b.output("pad_channels", {1, 6, 6}, onnx::TensorProto::INT32);
    return b.bytes();
}

// If as detectors use it, each branch reading values of the graph around it: a condition and
// its negation pick the then branch of one If and the else branch of the other, so one run
// takes both. Two outputs (one a constant in the else branch), a weight of the graph read in a
// branch, constants written inside the branches, and an If nested in an else branch. And Loop
// and Scan.
std::string branchesModel()
{
    OnnxBuilder b(13);
    b.input("x", {1, 4, 6});
    b.initializer("w", {6}, [](int64_t i) { return float(i) * 0.25f - 0.5f; }).initializer("zero", {}, 0.0f);
    b.initializer("low", {}, -1.0f);
    OnnxBuilder::setInt(b.node("ReduceSum", {"x"}, {"sum"}), "keepdims", 0);
    b.node("Greater", {"sum", "zero"}, {"c1"});
    b.node("Not", {"c1"}, {"c2"});
    OnnxBuilder::setInt(b.node("ReduceMin", {"x"}, {"min"}), "keepdims", 0);
    b.node("Less", {"min", "low"}, {"c3"});
    auto constant = [](OnnxBuilder& g, const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
        OnnxBuilder::setFloatTensor(g.node("Constant", {}, {name}), "value", dims, values);
    };
    // Two outputs: then (Relu(x) * 2 + w, max of x), else (-x, the constant -1).
    OnnxBuilder then1(13), else1(13);
    constant(then1, "two", {}, {2.0f});
    then1.node("Relu", {"x"}, {"r"});
    then1.node("Mul", {"r", "two"}, {"r2"});
    then1.node("Add", {"r2", "w"}, {"t1"});
    OnnxBuilder::setInt(then1.node("ReduceMax", {"x"}, {"t2"}), "keepdims", 0);
    then1.output("t1", {1, 4, 6}).output("t2", {});
    else1.node("Neg", {"x"}, {"e1"});
    constant(else1, "e2", {}, {-1.0f});
    else1.output("e1", {1, 4, 6}).output("e2", {});
    for (const auto& [cond, out1, out2] : {std::tuple{"c1", "a1", "a2"}, std::tuple{"c2", "b1", "b2"}}) {
        auto& iff = b.node("If", {cond}, {out1, out2}, std::string("if_") + cond);
        OnnxBuilder::setGraph(iff, "then_branch", then1);
        OnnxBuilder::setGraph(iff, "else_branch", else1);
    }
    // One output: then Sigmoid(x), else an If of its own (then x + [0.5, ..., 3], else x).
    OnnxBuilder then2(13), else2(13), inner_then(13), inner_else(13);
    then2.node("Sigmoid", {"x"}, {"s"});
    then2.output("s", {1, 4, 6});
    constant(inner_then, "steps", {6}, {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f});
    inner_then.node("Add", {"x", "steps"}, {"stepped"});
    inner_then.output("stepped", {1, 4, 6});
    inner_else.node("Identity", {"x"}, {"same"});
    inner_else.output("same", {1, 4, 6});
    auto& inner = else2.node("If", {"c3"}, {"inner"}, "inner_if");
    OnnxBuilder::setGraph(inner, "then_branch", inner_then);
    OnnxBuilder::setGraph(inner, "else_branch", inner_else);
    else2.output("inner", {1, 4, 6});
    for (const auto& [cond, out] : {std::pair{"c1", "y1"}, std::pair{"c2", "y2"}}) {
        auto& iff = b.node("If", {cond}, {out}, std::string("pick_") + cond);
        OnnxBuilder::setGraph(iff, "then_branch", then2);
        OnnxBuilder::setGraph(iff, "else_branch", else2);
    }
    b.node("Sub", {"a1", "b1"}, {"d1"});
    b.node("Add", {"a2", "b2"}, {"d2"});
    b.node("Add", {"y1", "y2"}, {"d3"});
    b.output("d1", {1, 4, 6}).output("d2", {}).output("d3", {1, 4, 6});

    // Loop: a body that halves its carried value and adds the graph's w, counts, and gives each
    // value as a scan output; stopped by its condition after 3 of at most 5 iterations, run for a
    // trip count alone (its condition ignored), and not run at all (an empty scan output).
    OnnxBuilder body(13);
    body.input("i", {}, onnx::TensorProto::INT64).input("keep", {}, onnx::TensorProto::BOOL);
    body.input("acc", {1, 4, 6}).input("count", {}, onnx::TensorProto::INT64);
    constant(body, "half", {}, {0.5f});
    body.node("Mul", {"acc", "half"}, {"halved"});
    body.node("Add", {"halved", "w"}, {"acc_next"});
    body.node("Add", {"count", "one"}, {"count_next"});
    body.node("Less", {"i", "last"}, {"keep_next"});
    body.node("Identity", {"acc_next"}, {"scanned"});
    body.output("keep_next", {}, onnx::TensorProto::BOOL).output("acc_next", {1, 4, 6});
    body.output("count_next", {}, onnx::TensorProto::INT64).output("scanned", {1, 4, 6});
    b.initializerInt64("five", {5}, {}).initializerInt64("none", {0}, {}).initializerInt64("start", {0}, {});
    b.initializerInt64("one", {1}, {}).initializerInt64("last", {2}, {});  // read by the body
    b.initializerInts("yes", onnx::TensorProto::BOOL, {1}, {});
    for (const auto& [trips, cond, out] : {std::tuple{"five", "yes", "l"}, std::tuple{"five", "", "m"},
                                          std::tuple{"none", "yes", "n"}}) {
        const std::string o = out;
        auto& loop = b.node("Loop", {trips, cond, "x", "start"}, {o + "_acc", o + "_count", o + "_scan"}, "loop_" + o);
        OnnxBuilder::setGraph(loop, "body", body);
        b.output(o + "_acc", {1, 4, 6}).output(o + "_count", {}, onnx::TensorProto::INT64).output(o + "_scan", {-1, 1, 4, 6});
    }

    // Scan: a running sum over x's last axis from its end, each sum times the graph's `low` as a
    // scan output stacked along the last axis in reverse.
    OnnxBuilder sum(13);
    sum.input("total", {1, 4}).input("slice", {1, 4});
    sum.node("Add", {"total", "slice"}, {"total_next"});
    sum.node("Mul", {"total_next", "low"}, {"scaled"});
    sum.output("total_next", {1, 4}).output("scaled", {1, 4});
    b.initializer("no_total", {1, 4}, 0.0f);
    auto& scan = b.node("Scan", {"no_total", "x"}, {"s_total", "s_scan"}, "scan");
    OnnxBuilder::setGraph(scan, "body", sum);
    OnnxBuilder::setInt(scan, "num_scan_inputs", 1);
    OnnxBuilder::setInts(scan, "scan_input_axes", {2});
    OnnxBuilder::setInts(scan, "scan_input_directions", {1});
    OnnxBuilder::setInts(scan, "scan_output_axes", {-1});
    OnnxBuilder::setInts(scan, "scan_output_directions", {1});
    b.output("s_total", {1, 4}).output("s_scan", {1, 4, 6});
    return b.bytes();
}

// RoiAlign and NonMaxSuppression in the forms detectors use and the others: average pooling
// with as many samples as a bin is wide and regions reaching outside the image, maximum
// pooling of 2 x 2 samples at half a pixel's offset; suppression of corner boxes given in
// any order with a score threshold and a limit per class (scores computed from the input),
// of centre boxes with equal scores, and of 90 boxes from the input in 4 classes.
std::string detectionOpsModel()
{
    OnnxBuilder b(16);
    b.input("x", {1, 3, 10, 12});
    b.initializer("rois", {4, 4}, [](int64_t i) {
        const float boxes[16] = {1.0f, 1.5f, 7.0f, 8.0f, -5.0f, -5.0f, 2.0f, 3.0f, 3.0f, 2.0f, 11.5f, 9.5f, 0.0f, 0.0f, 12.0f, 10.0f};
        return boxes[i];
    });
    b.initializerInt64("batch", {0, 0, 0, 0});
    b.initializer("corners", {1, 6, 4}, [](int64_t i) {
        const float boxes[24] = {0, 0, 4, 4, 4, 4, 0, 0.5f, 1, 1, 5, 5, 6, 6, 9, 9, 6.5f, 6, 9, 9.5f, 20, 20, 21, 21};
        return boxes[i];
    });
    b.initializer("centres", {1, 5, 4}, [](int64_t i) {
        const float boxes[20] = {2, 2, 4, 4, 2.5f, 2, 4, 4, 8, 8, 2, 2, 2, 2.2f, 4, 4, 30, 30, 1, 1};
        return boxes[i];
    });
    b.initializer("equal", {1, 1, 5}, 0.75f);
    b.initializerInt64("three", {3}).initializerInt64("ten", {10}).initializerInt64("score_shape", {1, 2, 6});
    b.initializer("iou", {1}, 0.4f).initializer("least", {1}, 0.45f);
    auto& avg = b.node("RoiAlign", {"x", "rois", "batch"}, {"avg"});
    OnnxBuilder::setInt(avg, "output_height", 3);
    OnnxBuilder::setInt(avg, "output_width", 4);
    OnnxBuilder::setString(avg, "coordinate_transformation_mode", "output_half_pixel");
    auto& max = b.node("RoiAlign", {"x", "rois", "batch"}, {"max"});
    OnnxBuilder::setString(max, "mode", "max");
    OnnxBuilder::setInt(max, "output_height", 2);
    OnnxBuilder::setInt(max, "output_width", 2);
    OnnxBuilder::setInt(max, "sampling_ratio", 2);
    OnnxBuilder::setFloat(max, "spatial_scale", 0.5f);
    b.node("Sigmoid", {"x"}, {"s"});
    b.initializerInt64("zero_start", {0}).initializerInt64("twelve", {12});
    b.node("Reshape", {"s", "flat"}, {"all"});
    b.initializerInt64("flat", {-1});
    b.node("Slice", {"all", "zero_start", "twelve"}, {"first"});
    b.node("Reshape", {"first", "score_shape"}, {"scores"});
    b.node("NonMaxSuppression", {"corners", "scores", "three", "iou", "least"}, {"kept"});
    OnnxBuilder::setInt(b.node("NonMaxSuppression", {"centres", "equal", "ten", "iou"}, {"kept_centres"}), "center_point_box", 1);
    // 90 boxes of the input's values (corners in any order, many overlapping) in 4 classes.
    b.initializerInt64("box_shape", {1, 90, 4}).initializerInt64("class_shape", {1, 4, 90}).initializerInt64("every", {90});
    b.initializer("spread", {}, 3.0f);
    b.node("Mul", {"x", "spread"}, {"spread_x"});
    b.node("Reshape", {"spread_x", "box_shape"}, {"many"});
    b.node("Reshape", {"s", "class_shape"}, {"many_scores"});
    b.node("NonMaxSuppression", {"many", "many_scores", "every", "iou"}, {"kept_many"});
    b.output("avg", {4, 3, 3, 4}).output("max", {4, 3, 2, 2});
    b.output("kept", {-1, 3}, onnx::TensorProto::INT64).output("kept_centres", {-1, 3}, onnx::TensorProto::INT64);
    b.output("kept_many", {-1, 3}, onnx::TensorProto::INT64);
    // As torchvision exports batched suppression: 150 classes of 4 overlapping boxes each, every
    // class offset 100 apart, no limit; more boxes than the generated Python compares at once,
    // so it takes them in chunks of classes apart.
    b.initializer("apart", {1, 600, 4}, [](int64_t i) {
        const int64_t box = i / 4, corner = i % 4, offset = box / 4 * 100, shift = box % 4;
        return float(offset + (corner >= 2 ? 10 : 0) + shift * (corner % 2 ? 1.0 : 1.5));
    });
    b.initializer("apart_scores", {1, 1, 600}, [](int64_t i) { return 0.5f + 0.4f * std::sin(float(i) * 0.7f); });
    b.initializerInt64("unlimited", {std::numeric_limits<int64_t>::max()});
    b.node("NonMaxSuppression", {"apart", "apart_scores", "unlimited", "iou"}, {"kept_apart"});
    b.output("kept_apart", {-1, 3}, onnx::TensorProto::INT64);
    return b.bytes();
}

// Elementwise and layer operators of the wild: Clip with both bounds and with one, LeakyRelu,
// Elu, Softplus, Max and Min of several inputs, comparisons, logic and Where, an instance
// normalization, strided transposed convolutions (padded with output padding; pads that differ
// between an axis's ends, given and from output_shape and auto_pad), Dropout's mask, training
// mode (BatchNormalization's statistics, Dropout's computed mode), QLinearConv and QLinearMatMul
// on the reference path, the Lp operators, Cast, Expand,
// Tile, ConstantOfShape, and GridSample in each mode and padding (RAFT's).
std::string layersModel()
{
    OnnxBuilder b(16);  // GridSample since 16
    b.input("x", {1, 4, 6, 6});
    b.initializer("lo", {}, -0.5f).initializer("hi", {}, 0.75f).initializer("zero", {}, 0.0f);
    b.initializer("scale", {4}, [](int64_t i) { return 0.5f + float(i) * 0.25f; });
    b.initializer("shift", {4}, [](int64_t i) { return float(i) * 0.1f - 0.2f; });
    b.initializer("wt", {4, 3, 3, 3}, [](int64_t i) { return float(i % 9 - 4) * 0.05f; }).initializer("bt", {3}, 0.1f);
    b.initializer("column", {4, 1, 1}, [](int64_t i) { return float(i) - 1.5f; });
    b.initializerInt64("full_shape", {1, 4, 6, 6}).initializerInt64("twice", {1, 1, 1, 2}).initializerInt64("wide", {1, 4, 6, 12});
    b.node("Clip", {"x", "lo", "hi"}, {"c1"});
    b.node("Clip", {"x", "", "hi"}, {"c2"});
    OnnxBuilder::setFloat(b.node("LeakyRelu", {"x"}, {"leaky"}), "alpha", 0.2f);
    b.node("Elu", {"x"}, {"elu"});
    b.node("Softplus", {"x"}, {"soft"});
    b.node("Max", {"c1", "c2", "x"}, {"max"});
    b.node("Min", {"x", "leaky"}, {"min"});
    b.node("Add", {"max", "min"}, {"y1"});
    b.node("Greater", {"x", "zero"}, {"positive"});
    b.node("Less", {"x", "hi"}, {"below"});
    b.node("Equal", {"c1", "x"}, {"inside"});
    b.node("And", {"positive", "below"}, {"both"});
    b.node("Or", {"both", "inside"}, {"either"});
    b.node("Not", {"either"}, {"neither"});
    b.node("Where", {"neither", "elu", "soft"}, {"y2"});
    b.node("InstanceNormalization", {"x", "scale", "shift"}, {"y3"});
    auto& convT = b.node("ConvTranspose", {"x", "wt", "bt"}, {"y4"});
    OnnxBuilder::setInts(convT, "strides", {2, 2});
    OnnxBuilder::setInts(convT, "pads", {1, 1, 1, 1});
    OnnxBuilder::setInts(convT, "output_padding", {1, 1});
    // Pads that differ between an axis's ends: given, from output_shape (one axis cropped, one
    // extended past the full 13) and from auto_pad SAME_LOWER.
    auto transposed = [&](const std::string& out) -> onnx::NodeProto& {
        auto& n = b.node("ConvTranspose", {"x", "wt", "bt"}, {out});
        OnnxBuilder::setInts(n, "strides", {2, 2});
        return n;
    };
    OnnxBuilder::setInts(transposed("t_pads"), "pads", {0, 2, 1, 0});
    OnnxBuilder::setInts(transposed("t_shape"), "output_shape", {11, 14});
    OnnxBuilder::setString(transposed("t_same"), "auto_pad", "SAME_LOWER");
    b.node("Dropout", {"x"}, {"kept", "kept_mask"});  // inference: every element kept
    // Training mode: BatchNormalization on the batch's statistics, its running ones moved towards
    // them; a Dropout whose training mode is computed (a ratio of 0: everything kept).
    b.initializer("bn_mean", {4}, [](int64_t i) { return float(i) * 0.1f; }).initializer("bn_var", {4}, 1.5f);
    auto& bn = b.node("BatchNormalization", {"x", "scale", "shift", "bn_mean", "bn_var"}, {"bn_y", "bn_mean_out", "bn_var_out"});
    OnnxBuilder::setInt(bn, "training_mode", 1);
    OnnxBuilder::setFloat(bn, "momentum", 0.8f);
    b.initializerInts("yes", onnx::TensorProto::BOOL, {1}, {});
    b.node("Not", {"yes"}, {"no"});
    b.node("Not", {"no"}, {"training"});
    b.node("Dropout", {"x", "zero", "training"}, {"dropped", "dropped_mask"});
    // QLinearConv and QLinearMatMul in forms the quantize pass does not write (per-channel scales
    // and nonzero zero points of the weights, an int8 output, pads that differ between an axis's
    // ends): the runtime's exact reference path.
    b.initializer("q_scale", {}, 0.05f).initializerInts("q_zero", onnx::TensorProto::UINT8, {128}, {});
    b.node("QuantizeLinear", {"x", "q_scale", "q_zero"}, {"xq"});
    b.initializerInts("qw", onnx::TensorProto::INT8, [] {
        std::vector<int64_t> v;
        for (int64_t i = 0; i < 108; ++i)
            v.push_back((i * 37) % 255 - 127);
        return v;
    }(), {3, 4, 3, 3});
    b.initializer("qw_scale", {3}, [](int64_t i) { return 0.01f * float(i + 1); });
    b.initializerInts("qw_zero", onnx::TensorProto::INT8, {0, 3, -2}, {3});
    b.initializer("qy_scale", {}, 0.5f).initializerInts("qy_zero", onnx::TensorProto::INT8, {-5}, {});
    auto& qconv = b.node("QLinearConv", {"xq", "q_scale", "q_zero", "qw", "qw_scale", "qw_zero", "qy_scale", "qy_zero"}, {"qconv"});
    OnnxBuilder::setInts(qconv, "pads", {1, 0, 0, 1});
    b.initializerInt64("rows", {24, 6});
    b.node("Reshape", {"xq", "rows"}, {"xq_rows"});
    b.initializerInts("qb", onnx::TensorProto::UINT8, [] {
        std::vector<int64_t> v;
        for (int64_t i = 0; i < 30; ++i)
            v.push_back((i * 53) % 256);
        return v;
    }(), {6, 5});
    b.initializer("qb_scale", {5}, [](int64_t i) { return 0.02f * float(i + 1); });
    b.initializerInts("qb_zero", onnx::TensorProto::UINT8, {120, 128, 130, 0, 255}, {5});
    b.initializer("qm_scale", {}, 0.2f).initializerInts("qm_zero", onnx::TensorProto::UINT8, {100}, {});
    b.node("QLinearMatMul", {"xq_rows", "q_scale", "q_zero", "qb", "qb_scale", "qb_zero", "qm_scale", "qm_zero"}, {"qmatmul"});
    // The Lp operators: L1 normalization along the channels, an L3 pooling with pads that differ
    // between an axis's ends, the global L2 norm.
    auto& l1 = b.node("LpNormalization", {"x"}, {"l1_normalized"});
    OnnxBuilder::setInt(l1, "p", 1);
    OnnxBuilder::setInt(l1, "axis", 1);
    auto& lp = b.node("LpPool", {"x"}, {"lp_pooled"});
    OnnxBuilder::setInts(lp, "kernel_shape", {3, 2});
    OnnxBuilder::setInts(lp, "strides", {2, 2});
    OnnxBuilder::setInts(lp, "pads", {1, 0, 0, 1});
    OnnxBuilder::setInt(lp, "p", 3);
    b.node("GlobalLpPool", {"x"}, {"lp_global"});
    OnnxBuilder::setInt(b.node("Cast", {"positive"}, {"mask"}), "to", onnx::TensorProto::FLOAT);
    b.node("Expand", {"column", "full_shape"}, {"columns"});
    b.node("Mul", {"mask", "columns"}, {"y5"});
    b.node("Tile", {"x", "twice"}, {"tiled"});
    OnnxBuilder::setFloatTensor(b.node("ConstantOfShape", {"wide"}, {"halves"}), "value", {1}, {0.5f});
    b.node("Add", {"tiled", "halves"}, {"y6"});
    // Sampling points reaching past the image on every side.
    b.initializer("grid", {1, 5, 7, 2}, [](int64_t i) { return float(std::sin(0.9 * double(i))) * 1.3f; });
    auto sample = [&](const std::string& out, const std::string& mode, const std::string& padding, int align) {
        auto& n = b.node("GridSample", {"x", "grid"}, {out});
        OnnxBuilder::setString(n, "mode", mode);
        OnnxBuilder::setString(n, "padding_mode", padding);
        OnnxBuilder::setInt(n, "align_corners", align);
    };
    sample("y7", "bilinear", "zeros", 0);
    sample("y8", "nearest", "border", 1);
    sample("y9", "bicubic", "reflection", 0);
    b.output("y1", {1, 4, 6, 6}).output("y2", {1, 4, 6, 6}).output("y3", {1, 4, 6, 6}).output("y4", {1, 3, 12, 12});
    b.output("t_pads", {1, 3, 12, 11}).output("t_shape", {1, 3, 11, 14}).output("t_same", {1, 3, 12, 12});
    b.output("kept_mask", {1, 4, 6, 6}, onnx::TensorProto::BOOL);
    b.output("bn_y", {1, 4, 6, 6}).output("bn_mean_out", {4}).output("bn_var_out", {4}).output("dropped", {1, 4, 6, 6});
    b.output("dropped_mask", {1, 4, 6, 6}, onnx::TensorProto::BOOL);
    b.output("qconv", {1, 3, 5, 5}, onnx::TensorProto::INT8).output("qmatmul", {24, 5}, onnx::TensorProto::UINT8);
    b.output("l1_normalized", {1, 4, 6, 6}).output("lp_pooled", {1, 4, 3, 3}).output("lp_global", {1, 4, 1, 1});
    b.output("y5", {1, 4, 6, 6}).output("y6", {1, 4, 6, 12});
    b.output("y7", {1, 4, 5, 7}).output("y8", {1, 4, 5, 7}).output("y9", {1, 4, 5, 7});
    return b.bytes();
}

// A video model's 3-D layers: factorized convolutions (1 x 3 x 3 then 3 x 1 x 1, with a Relu and
// a residual Add that the default passes fuse into them), max pooling over all three axes and
// over planes only (ceil mode), a full 3 x 3 x 3 convolution and a pool with uneven padding.
std::string videoModel()
{
    OnnxBuilder b(13);
    b.input("x", {1, 4, 6, 10, 12});
    auto weights = [&](const std::string& name, std::vector<int64_t> dims) {
        b.initializer(name, dims, [](int64_t i) { return float((i * 7) % 11 - 5) * 0.04f; });
    };
    weights("w_planes", {8, 4, 1, 3, 3});
    weights("w_depth", {8, 8, 3, 1, 1});
    weights("w_full", {4, 8, 3, 3, 3});
    b.initializer("bias", {8}, [](int64_t i) { return float(i) * 0.05f - 0.2f; });
    OnnxBuilder::setInts(b.node("Conv", {"x", "w_planes", "bias"}, {"planes"}), "pads", {0, 1, 1, 0, 1, 1});
    b.node("Relu", {"planes"}, {"a"});
    OnnxBuilder::setInts(b.node("Conv", {"a", "w_depth"}, {"depth"}), "pads", {1, 0, 0, 1, 0, 0});
    b.node("Add", {"depth", "a"}, {"sum"});
    auto pool = [&](const std::string& in, const std::string& out, std::vector<int64_t> kernel,
                    std::vector<int64_t> strides, std::vector<int64_t> pads, int ceil) {
        auto& n = b.node("MaxPool", {in}, {out});
        OnnxBuilder::setInts(n, "kernel_shape", std::move(kernel));
        OnnxBuilder::setInts(n, "strides", std::move(strides));
        OnnxBuilder::setInts(n, "pads", std::move(pads));
        OnnxBuilder::setInt(n, "ceil_mode", ceil);
    };
    pool("sum", "pooled", {3, 3, 3}, {2, 2, 2}, {1, 1, 1, 1, 1, 1}, 0);
    pool("pooled", "y1", {1, 3, 3}, {1, 2, 2}, {0, 0, 0, 0, 0, 0}, 1);
    OnnxBuilder::setInts(b.node("Conv", {"sum", "w_full"}, {"full"}), "pads", {1, 1, 1, 1, 1, 1});
    pool("full", "y2", {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 1, 1, 1}, 0);
    b.output("y1", {1, 8, 3, 2, 3}).output("y2", {1, 4, 3, 5, 6});
    return b.bytes();
}

// NaN where the generated helpers run oneDNN's kernels, which do not keep it: max pooling of a
// convolution's output (channels-last, so max_pool2d takes oneDNN's kernel), convolutions
// whose Relu, SiLU and HardSwish the default passes fuse (oneDNN's post-ops), and a softmax along the last axis
// (oneDNN's makes 0 of a row's numbers beside a NaN). The NaNs come with the input
// (nanInput), or (`inside`) from x / x where the input holds zeros, in a graph that is then
// not finite (where the exported code pools with ATen's max pooling and writes the Relu out).
// Every value computed from a NaN must be NaN, as in F.max_pool2d, F.relu and the runtime, in
// whichever place the NaN is.
std::string nanModel(bool inside)
{
    OnnxBuilder b(13);
    b.input("x", {1, 16, 9, 9});
    b.initializer("w", {16, 16, 1, 1}, [](int64_t i) { return i % 17 == 0 ? 1.0f : 0.01f; });
    b.initializer("w3", {8, 16, 3, 3}, [](int64_t i) { return float(i % 7 - 3) * 0.05f; });
    const std::string a = inside ? "a" : "x";
    if (inside)
        b.node("Div", {"x", "x"}, {"a"});
    b.node("Conv", {a, "w"}, {"c"});
    OnnxBuilder::setInts(b.node("Conv", {a, "w3"}, {"c3"}), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c3"}, {"y3"});
    auto pool = [&](const std::string& out, int64_t stride, int64_t pad, int ceil) {
        auto& n = b.node("MaxPool", {"c"}, {out});
        OnnxBuilder::setInts(n, "kernel_shape", {3, 3});
        OnnxBuilder::setInts(n, "strides", {stride, stride});
        OnnxBuilder::setInts(n, "pads", {pad, pad, pad, pad});
        OnnxBuilder::setInt(n, "ceil_mode", ceil);
    };
    pool("y1", 2, 0, 1);
    pool("y2", 1, 1, 0);
    b.node("Softmax", {"c"}, {"y4"});
    b.node("Conv", {a, "w"}, {"c5"});
    b.node("Sigmoid", {"c5"}, {"s5"});
    b.node("Mul", {"c5", "s5"}, {"y5"});
    // HardSwish as opset 13 spells it (fuse-hardswish's pattern), fused into its convolution:
    // NaN of NaN and of -inf, as ATen's.
    b.node("Conv", {a, "w"}, {"c6"});
    auto& gate = b.node("HardSigmoid", {"c6"}, {"h6"});
    OnnxBuilder::setFloat(gate, "alpha", 1.0f / 6.0f);
    OnnxBuilder::setFloat(gate, "beta", 0.5f);
    b.node("Mul", {"c6", "h6"}, {"y6"});
    b.output("y1", {1, 16, 4, 4}).output("y2", {1, 16, 9, 9}).output("y3", {1, 8, 9, 9}).output("y4", {1, 16, 9, 9});
    b.output("y5", {1, 16, 9, 9}).output("y6", {1, 16, 9, 9});
    return b.bytes();
}

// nanModel's input: normal numbers and `poison` at the first, a middle and the last pixel.
Tensor nanInput(float poison)
{
    Tensor t;
    t.dtype = DataType::Float;
    t.dims = {1, 16, 9, 9};
    std::mt19937 rng(11);
    std::normal_distribution<float> normal;
    std::vector<float> v(size_t(t.numel()));
    for (float& f : v)
        f = normal(rng);
    for (size_t i : {size_t(0), size_t(7 * 81 + 4 * 9 + 5), v.size() - 1})
        v[i] = poison;
    t.data.resize(v.size() * sizeof(float));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

// Writes `bytes` to `path`; false when it cannot.
bool writeFile(const QString& path, const std::string& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
}

}  // namespace

class TestCodegen : public QObject {
    Q_OBJECT

    // In the build tree and kept between runs: the generated C++ is byte-identical
    // next time, so ccache and ninja make a rerun's build take seconds.
    const QString work_ = QDir(test::modelsDir() + "/../codegen-test").absolutePath();
    std::map<QString, Variant> variants_;
    // variant -> `--input NAME=FILE.npy` for each graph input where the variant names its files
    // (as `ramiel run` takes them), else `--input FILE.npy`
    std::map<QString, QStringList> inputArgs_;
    std::map<QString, std::vector<Tensor>> reference_;  // variant -> runtime serial outputs
    std::map<QString, std::vector<std::string>> outputFiles_;
    bool cppBuilt_ = false;
    QString cppBuildLog_;

    QString dir(const QString& variant, const QString& lang) const { return work_ + "/" + lang + "/" + variant; }
    QString marker() const { return work_ + "/PWNED"; }

    // Exports, writes the input and runs the runtime once per variant.
    void prepare(const QString& name)
    {
        if (reference_.count(name))
            return;
        const Variant& v = variants_.at(name);
        const Model model = loadOnnx(v.model.toStdString());
        std::vector<Tensor> inputs;
        QStringList& args = inputArgs_[name];
        for (int k = 0; k < v.inputs.size(); ++k) {
            inputs.push_back(readNpy(v.inputs[k].toStdString()));
            args << "--input" << QString::fromStdString(model.graph.value(model.graph.inputs()[size_t(k)]).name) + "=" + v.inputs[k];
        }
        if (v.inputs.isEmpty()) {
            const QString npy = work_ + "/" + name + ".input.npy";
            const QString given = test::modelsDir() + "/" + QFileInfo(v.model).completeBaseName() + ".input.npy";
            inputs.push_back(v.batch == 1 && QFile::exists(given) ? readNpy(given.toStdString()) : randomInput(model, v.batch, 7));
            writeNpy(npy.toStdString(), inputs.back());
            args << "--input" << npy;
        }
        auto compiled = runtime().compile(model);
        compiled->setInputs(inputs);
        compiled->serialExecutor(1)->run();
        reference_[name] = compiled->outputs();
        std::vector<std::string> outputNames;
        for (ValueId o : model.graph.outputs())
            outputNames.push_back(model.graph.value(o).name);
        outputFiles_[name] = uniqueFileNames(outputNames, ".npy");
    }

    void exportTo(const QString& name, const QString& lang)
    {
        const Variant& v = variants_.at(name);
        QStringList args = {"export", v.model, "--lang", lang, "-o", dir(name, lang), "-p", "2", "-b",
                            QString::number(v.batch), "-d", QString::number(v.degree), "--machine", kMachine};
        args << "--passes" << v.passes << v.options;
        const auto r = test::runCli(args, 300000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    }

    // A variant's program (model.py or main.cpp), exported afresh: the work folder is kept
    // between runs, and a file left there may come from another build.
    QString generatedCode(const QString& name, const QString& lang)
    {
        exportTo(name, lang);
        QFile f(dir(name, lang) + (lang == "python" ? "/model.py" : "/main.cpp"));
        return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
    }

    void compareOutputs(const QString& name, const QString& savedDir)
    {
        const auto& ref = reference_.at(name);
        if (variants_.at(name).detections) {  // near-equal scores may come in either order
            std::vector<Tensor> got;
            for (size_t k = 0; k < ref.size(); ++k)
                got.push_back(readNpy((savedDir + "/").toStdString() + outputFiles_.at(name)[k]));
            QString worst;
            const double diff = test::detectionDifference(got, ref, worst);
            QVERIFY2(diff <= 1e-4, qPrintable(QString("%1: %2, difference %3").arg(name, worst).arg(diff)));
            return;
        }
        for (size_t k = 0; k < ref.size(); ++k) {
            const std::string path = (savedDir + "/").toStdString() + outputFiles_.at(name)[k];
            const Tensor got = readNpy(path);
            const double diff = relativeDifference(got, ref[k]);
            QVERIFY2(diff <= 1e-4, qPrintable(QString("%1 output %2: relative difference %3").arg(name).arg(k).arg(diff)));
        }
    }

    // Serial and parallel must be bitwise equal with one copy of the graph (the same
    // kernels on the same sizes); with copies, each on a sub-batch, within 1e-4.
    void checkSerialParallel(const QString& name, const QString& out)
    {
        const QStringList lines = out.split('\n').filter(QRegularExpression("^output "));
        QVERIFY2(!lines.isEmpty(), qPrintable(out));
        for (const QString& line : lines)
            if (variants_.at(name).degree == 1)
                QVERIFY2(line.endsWith(" ok (equal)"), qPrintable(line));
            else
                QVERIFY2(line.contains(" ok"), qPrintable(line));
        QVERIFY2(out.contains(QRegularExpression("^speedup +[0-9.]+x +\\(bound [0-9.]+x", QRegularExpression::MultilineOption)),
                 qPrintable(out));
    }

    void addRows()
    {
        QTest::addColumn<QString>("variant");
        for (const auto& [name, v] : variants_)
            QTest::newRow(qPrintable(name)) << name;
    }

    void buildCpp()
    {
        if (cppBuilt_)
            return;
        cppBuilt_ = true;
        QString lists = "cmake_minimum_required(VERSION 3.16)\nproject(generated_models CXX)\n";
        for (const auto& [name, v] : variants_) {
            exportTo(name, "cpp");
            lists += "set(MODEL_TARGET " + name + ")\n" + (v.oneDnn ? "" : "set(MODEL_USE_ONEDNN OFF)\n") +
                     "add_subdirectory(" + name + ")\nunset(MODEL_USE_ONEDNN)\n";
        }
        QVERIFY(writeFile(work_ + "/cpp/CMakeLists.txt", lists.toStdString()));
        QStringList configure = {"-S", work_ + "/cpp", "-B", work_ + "/cpp/build", "-G", "Ninja",
                                 "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O0"};  // the code only calls libtorch: -O0 halves the build
        if (!QStandardPaths::findExecutable("ccache").isEmpty())
            configure << "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache";
        QElapsedTimer timer;
        timer.start();
        const auto c = runProcess("cmake", configure);
        QVERIFY2(c.exitCode == 0, qPrintable(c.out));
        const auto b = runProcess("cmake", {"--build", work_ + "/cpp/build", "-j2"}, {}, 1200000);
        QVERIFY2(b.exitCode == 0, qPrintable(b.out.right(6000)));
        qInfo("built %d generated C++ programs in %.1f s", int(variants_.size()), timer.elapsed() / 1000.0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(QDir().mkpath(work_));
        QFile::remove(marker());
        for (const char* stale : {"/invalid", "/unsupported-out", "/a-file"})
            QDir(work_ + stale).exists() ? void(QDir(work_ + stale).removeRecursively()) : void(QFile::remove(work_ + stale));
        QVERIFY2(QFile::exists(kPython), "/usr/bin/python3 is needed to run generated Python");
        const QString models = test::modelsDir();
        // A hand-built model written into the work folder as FILE.onnx, the model of variant `v`.
        auto built = [&](const QString& file, const std::string& bytes, Variant v) {
            v.model = work_ + "/" + file + ".onnx";
            QVERIFY(writeFile(v.model, bytes));
            variants_[v.name] = v;
        };
        for (const QString& m : {QString("googlenet"), QString("inception_v3"), QString("squeezenet1_0"), QString("densenet121")})
            variants_[m] = {m, test::modelPath(m), 1, 1};
        variants_["googlenet_b4_d2"] = {"googlenet_b4_d2", test::modelPath("googlenet"), 4, 2};
        // One sample per copy, two in forward(): the classifier's Gemm must not be a matrix-vector product.
        variants_["googlenet_b2_d2"] = {"googlenet_b2_d2", test::modelPath("googlenet"), 2, 2};
        variants_["sample"] = {"sample", test::sourcePath("resources/models/inception_sample.onnx"), 1, 1};
        // C++ without oneDNN's own API: convolutions through libtorch's prepacked operators.
        variants_["sample_libtorch"] = {"sample_libtorch", test::sourcePath("resources/models/inception_sample.onnx"),
                                        1, 1, "none", false};
        // Optimized graphs: fused Conv+Clip (ReLU6) and Conv+Relu nodes, folded constants.
        variants_["mobilenet_v2_passes"] = {"mobilenet_v2_passes", test::modelPath("mobilenet_v2"), 1, 1, "default"};
        built("hostile", hostileModel(marker()), {"hostile", {}, 1, 1});
        // fuse-gelu's, fuse-silu's, fuse-layer-norm's and fuse-matmul-add's nodes: F.gelu /
        // at::gelu, F.silu / at::silu, F.layer_norm / at::layer_norm, matmul, add and gelu.
        built("activations", activationsModel(), {"activations_passes", {}, 1, 1, "default"});
        // fuse-channel-shuffle's node with one output: cat, reshape, permute, reshape.
        built("shuffle", shuffleModel(), {"shuffle_passes", {}, 1, 1, "default"});
        // fuse-batchnorm's node: cat, batch_norm, relu; fuse-group-norm's: group_norm, relu.
        built("dense", denseModel(), {"dense_passes", {}, 1, 1, "default"});
        built("indexing", indexingModel(), {"indexing", {}, 1, 1});
        // Without the passes, which would fold the Identity nodes away.
        built("shared_constants", sharedConstantsModel(), {"shared_constants", {}, 1, 1});
        // A transformer whose shifted windows and attention heads are Slices and Gathers after folding.
        variants_["swin_t_passes"] = {"swin_t_passes", test::modelPath("swin_t"), 1, 1, "default"};
        // Without clones, so that the second part is published rather than computed again.
        built("split_branches", splitBranchesModel(), {"split_branches", {}, 1, 1, "none", true, {"--no-clone"}});
        built("layers", layersModel(), {"layers", {}, 1, 1});
        built("resize", resizeModel(), {"resize", {}, 1, 1});
        built("upsample", upsampleModel(), {"upsample", {}, 1, 1});
        // Folded, the computed scales are constants that resize the batch and the channels too.
        variants_["upsample_passes"] = {"upsample_passes", work_ + "/upsample.onnx", 1, 1, "default"};
        built("math_ops", mathOpsModel(), {"math_ops", {}, 1, 1});
        built("losses", lossesModel(), {"losses", {}, 1, 1});
        built("opset17", opset17Model(), {"opset17", {}, 1, 1});
        variants_["opset17_passes"] = {"opset17_passes", work_ + "/opset17.onnx", 1, 1, "default"};
        // The quantize pass's int8 googlenet (QuantizeLinear, QLinearConv, uint8 MaxPool and Concat,
        // QLinearMatMul, DequantizeLinear), compared with the runtime on the same int8 model.
        {
            const QString int8 = work_ + "/googlenet_int8.onnx";
            const auto r = test::runCli({"optimize", test::modelPath("googlenet"), "--passes", "all", "-o", int8}, 300000);
            QVERIFY2(r.exitCode == 0 && r.out.contains("quantized 57 convolutions"), qPrintable(r.out + r.err));
            variants_["googlenet_int8"] = {"googlenet_int8", int8, 1, 1};
        }
        built("recurrent_states", recurrentStatesModel(), {"recurrent_states", {}, 1, 1});
        // 3-D convolutions and max pooling: the conv3d and max_pool3d helpers on the 2-D ones.
        built("video", videoModel(), {"video_passes", {}, 1, 1, "default"});
        // NaN in the input, NaN made inside (x / x of zeros), and -inf in the input.
        const std::vector<std::tuple<QString, bool, float>> poisons{
            {"nan_inputs", false, std::numeric_limits<float>::quiet_NaN()},
            {"nan_inside", true, 0.0f},
            {"neginf_inputs", false, -std::numeric_limits<float>::infinity()}};
        for (const auto& [name, inside, poison] : poisons) {
            const QString input = work_ + "/" + name + ".input.npy";
            writeNpy(input.toStdString(), nanInput(poison));
            built(name, nanModel(inside), {name + "_passes", {}, 1, 1, "default", true, {}, {input}});
        }
        // A segmentation model: LR-ASPP's head upsamples with F.interpolate(size=...), whose sizes
        // are the Concat of the input's Shape (batch and channels) and constant spatial sizes.
        variants_["lraspp_passes"] = {"lraspp_passes", models + "/../real_models/lraspp_mobilenet_v3_large.onnx", 1, 1,
                                      "default"};
        // Recurrent layers as PyTorch exports nn.LSTM (two bidirectional layers), nn.GRU and
        // nn.RNN (Relu): the generated `recurrent` helper, PyTorch's own kernels.
        variants_["sequence_tagger_passes"] = {"sequence_tagger_passes", models + "/../real_models/sequence_tagger.onnx",
                                               1, 1, "default"};
        // A causal transformer language model: Gather embeddings, a Trilu mask, attention, GELU,
        // LogSoftmax and ArgMax (int64 token ids in, the next token of each position out).
        const QString lm = models + "/../real_models/causal_lm";
        variants_["causal_lm_passes"] = {"causal_lm_passes", lm + ".onnx", 1, 1, "default", true, {}, {lm + ".input_0.npy"}};
        built("computed_indices", computedIndicesModel(), {"computed_indices", {}, 1, 1});
        built("computed_shapes", computedShapesModel(), {"computed_shapes", {}, 1, 1});
        built("branches", branchesModel(), {"branches", {}, 1, 1});
        built("detection_ops", detectionOpsModel(), {"detection_ops", {}, 1, 1});
        // A detector: If branches with NonMaxSuppression, RoiAlign, TopK, computed shapes and indices.
        const QString detector = models + "/../real_models/fasterrcnn_mobilenet_v3_large_320_fpn";
        variants_["detector_passes"] = {"detector_passes", detector + ".onnx", 1, 1, "default", true, {},
                                        {detector + ".input.npy"}, true};
        // Packed sequences as PyTorch exports them: the rows sorted by length (TopK), gathered,
        // run ragged, and put back in order (ScatterElements of the sort's indices, Gather).
        const QString packed = models + "/../real_models/packed_sequences";
        variants_["packed_sequences_passes"] = {"packed_sequences_passes", packed + ".onnx", 1, 1, "default", true, {},
                                                {packed + ".input_0.npy", packed + ".input_1.npy"}};
    }

    void python_data() { addRows(); }
    void python()
    {
        QFETCH(QString, variant);
        prepare(variant);
        exportTo(variant, "python");
        const QString out = dir(variant, "python");
        QDir(out + "/outputs").removeRecursively();
        const auto r = runProcess(kPython, QStringList{out + "/run.py"} + inputArgs_.at(variant) +
                                               QStringList{"--save-outputs", out + "/outputs", "--runs", "1"}, work_);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out.right(4000)));
        QVERIFY2(r.out.contains("serial") && r.out.contains("parallel") && r.out.contains(" ok"), qPrintable(r.out));
        checkSerialParallel(variant, r.out);
        compareOutputs(variant, out + "/outputs");
        const auto flakes = runProcess(kPython, {"-m", "pyflakes", out + "/model.py", out + "/run.py"});
        QVERIFY2(flakes.exitCode == 0 && flakes.out.trimmed().isEmpty(), qPrintable(flakes.out.left(4000)));
        QVERIFY2(!QFile::exists(marker()), "a model name was executed");
        QVERIFY(QFile::exists(out + "/README.md"));
    }

    // The generated module is usable from the user's own code: imported from another
    // folder, run serially and in parallel, outputs equal to the runtime's.
    void pythonImport_data()
    {
        QTest::addColumn<QString>("variant");
        for (const char* v : {"googlenet", "googlenet_b4_d2", "hostile"})
            QTest::newRow(v) << QString(v);
    }
    void pythonImport()
    {
        QFETCH(QString, variant);
        prepare(variant);
        const QString out = dir(variant, "python");
        if (!QFile::exists(out + "/model.py"))
            exportTo(variant, "python");
        QFile model(out + "/model.py");
        QVERIFY(model.open(QIODevice::ReadOnly));
        const auto cls = QRegularExpression("^class (\\w+)\\(torch\\.nn\\.Module\\):", QRegularExpression::MultilineOption)
                             .match(QString::fromUtf8(model.readAll()));
        QVERIFY(cls.hasMatch());
        const QString saved = work_ + "/import-" + variant;
        QDir(saved).removeRecursively();
        QVERIFY(QDir().mkpath(saved));
        const QString script = saved + "/user.py";
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QString("import sys\n"
                        "import numpy as np\n"
                        "import torch\n"
                        "sys.path.insert(0, sys.argv[1])\n"
                        "from model import %1, OUTPUTS\n"
                        "net = %1()\n"
                        "assert isinstance(net, torch.nn.Module) and len(list(net.buffers())) > 0\n"
                        "x = torch.from_numpy(np.load(sys.argv[2]))\n"
                        "with torch.inference_mode():\n"
                        "    serial = net(x)\n"
                        "parallel = net.forward_parallel(x)\n"
                        "serial = serial if isinstance(serial, tuple) else (serial,)\n"
                        "parallel = parallel if isinstance(parallel, tuple) else (parallel,)\n"
                        "for (name, file), a, b in zip(OUTPUTS, serial, parallel):\n"
                        "    assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), name\n"
                        "    np.save(sys.argv[3] + '/' + file, b.contiguous().numpy())\n"
                        "print('imported', type(net).__name__)\n")
                    .arg(cls.captured(1))
                    .toUtf8());
        f.close();
        const auto r = runProcess(kPython, {script, out, inputArgs_.at(variant).at(1), saved}, saved);
        QVERIFY2(r.exitCode == 0 && r.out.contains("imported " + cls.captured(1)), qPrintable(r.out.right(4000)));
        compareOutputs(variant, saved);
        QVERIFY2(!QFile::exists(marker()), "a model name was executed");
    }

    // Max pooling is the oneDNN helper where its input is finite whenever the model's inputs are
    // (nan_inputs: the helper looks for NaN only in calls on inputs that hold one) and ATen's where
    // it may not be (nan_inside: x / x), where the helper would drop a NaN made inside.
    void maxPoolingHelper_data()
    {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("lang");
        QTest::addColumn<QString>("call");
        QTest::addColumn<QString>("absent");
        QTest::newRow("python, finite") << "nan_inputs_passes" << "python" << " = max_pool2d(Conv," << "F.max_pool2d(Conv,";
        QTest::newRow("python, not finite") << "nan_inside_passes" << "python" << " = F.max_pool2d(Conv," << " = max_pool2d(";
        QTest::newRow("cpp, finite") << "nan_inputs_passes" << "cpp" << " = max_pool2d(Conv," << "at::max_pool2d(Conv,";
        QTest::newRow("cpp, not finite") << "nan_inside_passes" << "cpp" << " = at::max_pool2d(Conv," << " = max_pool2d(";
    }
    void maxPoolingHelper()
    {
        QFETCH(QString, variant);
        QFETCH(QString, lang);
        QFETCH(QString, call);
        QFETCH(QString, absent);
        const QString code = generatedCode(variant, lang);
        QVERIFY2(code.contains(call), qPrintable(call));
        QVERIFY2(!code.contains(absent), qPrintable(absent));
    }

    // Weights and biases that Identity nodes pass on from initializers (PyTorch's exporter shares
    // equal initializers so; googlenet exported without the graph passes reads 40 of its 57
    // convolutions' biases so) reach the helpers that make a oneDNN primitive once, as the runtime
    // prepares them: every Conv a conv2d call and every Gemm a linear one, none of ATen's
    // convolution (which reorders the weights on every call) or addmm / addmv.
    void sharedConstantsReachTheHelper_data()
    {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("lang");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("call");
        QTest::addColumn<QString>("absent");
        QTest::newRow("googlenet, python") << "googlenet" << "python" << "Conv" << " = conv2d(" << "torch.convolution(";
        QTest::newRow("googlenet, cpp") << "googlenet" << "cpp" << "Conv" << " = conv2d(" << "at::convolution(";
        QTest::newRow("Conv, python") << "shared_constants" << "python" << "Conv" << " = conv2d(" << "torch.convolution(";
        QTest::newRow("Conv, cpp") << "shared_constants" << "cpp" << "Conv" << " = conv2d(" << "at::convolution(";
        QTest::newRow("Gemm, python") << "shared_constants" << "python" << "Gemm" << " = linear(" << "addm";
        QTest::newRow("Gemm, cpp") << "shared_constants" << "cpp" << "Gemm" << " = linear(" << "addm";
    }
    void sharedConstantsReachTheHelper()
    {
        QFETCH(QString, variant);
        QFETCH(QString, lang);
        QFETCH(QString, op);
        QFETCH(QString, call);
        QFETCH(QString, absent);
        const QString code = generatedCode(variant, lang);
        const Model model = loadOnnx(variants_.at(variant).model.toStdString());
        const auto nodes = std::count_if(model.graph.nodes().begin(), model.graph.nodes().end(),
                                         [&](const Node& n) { return n.opType == op.toStdString(); });
        QVERIFY2(nodes > 0 && code.count(call) >= nodes, qPrintable(QString("%1 of %2").arg(code.count(call)).arg(nodes)));
        QVERIFY2(!code.contains(absent), qPrintable(absent));
    }

    void cpp_data() { addRows(); }
    void cpp()
    {
        QFETCH(QString, variant);
        prepare(variant);
        buildCpp();
        const QString exe = work_ + "/cpp/build/" + variant + "/" + variant;
        QVERIFY2(QFile::exists(exe), qPrintable(exe));
        const QString out = dir(variant, "cpp");
        QDir(out + "/outputs").removeRecursively();
        const auto r = runProcess(exe, inputArgs_.at(variant) + QStringList{"--save-outputs", out + "/outputs", "--runs", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.out.right(4000)));
        QVERIFY2(r.out.contains("serial") && r.out.contains("parallel") && r.out.contains(" ok"), qPrintable(r.out));
        checkSerialParallel(variant, r.out);
        compareOutputs(variant, out + "/outputs");
        QVERIFY2(!QFile::exists(marker()), "a model name was executed");
    }

    // An input file that cannot be read, or files that fit neither form (NAME=FILE.npy, or one
    // per graph input in order): one line naming the problem, no traceback.
    void inputErrors_data()
    {
        QTest::addColumn<QString>("lang");
        QTest::addColumn<QStringList>("inputs");
        QTest::addColumn<QString>("message");
        const QString missing = work_ + "/no_such_input.npy";
        for (const QString lang : {"python", "cpp"}) {
            QTest::addRow("%s, missing file", qPrintable(lang)) << lang << QStringList{missing} << "no_such_input.npy";
            QTest::addRow("%s, two files for one input", qPrintable(lang))
                << lang << QStringList{missing, missing} << "expected NAME=FILE.npy, or 1 --input files";
        }
    }
    void inputErrors()
    {
        QFETCH(QString, lang);
        QFETCH(QStringList, inputs);
        QFETCH(QString, message);
        const QString variant = "sample";
        prepare(variant);
        QStringList args;
        for (const QString& input : inputs)
            args << "--input" << input;
        args << "--runs" << "1";
        ProcessResult r;
        if (lang == "python") {
            exportTo(variant, "python");
            r = runProcess(kPython, QStringList{dir(variant, "python") + "/run.py"} + args, work_);
        } else {
            buildCpp();
            r = runProcess(work_ + "/cpp/build/" + variant + "/" + variant, args);
        }
        QVERIFY2(r.exitCode != 0, qPrintable(r.out));
        const QStringList lines = r.out.trimmed().split('\n');
        QVERIFY2(lines.last().contains(message) && !r.out.contains("Traceback"), qPrintable(r.out));
    }

    // The generated CMakeLists.txt links LLVM's libomp ahead of libtorch's libgomp, as
    // Ramiel's programs run: libtorch's OpenMP calls reach libomp (the dynamic linker's log).
    void cppRunsOnLlvmOpenMp()
    {
        const QString name = "sample";
        prepare(name);
        buildCpp();
        const QString log = work_ + "/openmp-bindings";
        for (const QFileInfo& f : QDir(work_).entryInfoList({"openmp-bindings.*"}, QDir::Files))
            QFile::remove(f.filePath());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("LD_DEBUG", "bindings");
        env.insert("LD_DEBUG_OUTPUT", log);
        const auto r = runProcess(work_ + "/cpp/build/" + name + "/" + name, {"--runs", "1", "--serial-threads", "2"},
                                  {}, 600000, env);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out.right(4000)));
        QString bindings;
        for (const QFileInfo& f : QDir(work_).entryInfoList({"openmp-bindings.*"}, QDir::Files)) {
            QFile file(f.filePath());
            QVERIFY(file.open(QIODevice::ReadOnly));
            bindings += QString::fromUtf8(file.readAll());
        }
        const QRegularExpression toLibomp("libtorch_cpu\\.so[^\\n]* to [^\\n]*/libomp\\.so\\.5 [^\\n]*`omp_set_num_threads'");
        QVERIFY2(toLibomp.match(bindings).hasMatch(), qPrintable(bindings.left(2000)));
        QVERIFY2(!bindings.contains(QRegularExpression("libtorch_cpu\\.so[^\\n]* to [^\\n]*/libgomp\\.so\\.1 ")),
                 "libtorch's OpenMP calls reach libgomp");
    }

    // The generated Python where an optional library is missing: oneDNN's (libdnnl.so.2 that
    // cannot be loaded: PyTorch's operators instead, libtorch's prepacked convolutions and
    // F.max_pool2d) and torchvision's (the suppression loop): the same outputs.
    void pythonFallbacks_data()
    {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("line");         // in model.py
        QTest::addColumn<QString>("replacement");
        QTest::newRow("without oneDNN") << "sample" << "\nONEDNN = _load_onednn()\n" << "\nONEDNN = None\n";
        QTest::newRow("without torchvision") << "detection_ops" << "from torchvision.ops import nms as TORCHVISION_NMS"
                                             << "raise ImportError";
    }
    void pythonFallbacks()
    {
        QFETCH(QString, variant);
        QFETCH(QString, line);
        QFETCH(QString, replacement);
        prepare(variant);
        const QString out = work_ + "/python-fallback-" + variant;
        QDir(out).removeRecursively();
        exportTo(variant, "python");
        QVERIFY(QDir().mkpath(out + "/outputs"));
        for (const char* file : {"model.py", "run.py", "weights.bin"})
            QVERIFY(QFile::copy(dir(variant, "python") + "/" + file, out + "/" + file));
        QFile model(out + "/model.py");
        QVERIFY(model.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(model.readAll());
        model.close();
        QVERIFY(text.contains(line));
        text.replace(line, replacement);
        QVERIFY(model.open(QIODevice::WriteOnly | QIODevice::Truncate));
        model.write(text.toUtf8());
        model.close();
        const auto r = runProcess(kPython, QStringList{out + "/run.py"} + inputArgs_.at(variant) +
                                               QStringList{"--save-outputs", out + "/outputs", "--runs", "1"}, work_);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out.right(4000)));
        checkSerialParallel(variant, r.out);
        compareOutputs(variant, out + "/outputs");
    }

    void identifiers()
    {
        codegen::IdentifierPool pool;
        QCOMPARE(QString::fromStdString(pool.make("/conv1/conv/Conv_output_0")), QString("conv1_conv_Conv_output_0"));
        QCOMPARE(QString::fromStdString(pool.make("class")), QString("class_2"));
        QCOMPARE(QString::fromStdString(pool.make("__class__")), QString("class_3"));
        QCOMPARE(QString::fromStdString(pool.make("a-b")), QString("a_b"));
        QCOMPARE(QString::fromStdString(pool.make("a.b")), QString("a_b_2"));
        QCOMPARE(QString::fromStdString(pool.make("123")), QString("v_123"));
        QCOMPARE(QString::fromStdString(pool.make("\xd0\xb2\n")), QString("v"));
        QCOMPARE(QString::fromStdString(pool.make("")), QString("v_2"));
        QCOMPARE(QString::fromStdString(codegen::quotedForComment("a\\\n*/\xc3\xa9")), QString("'a\\\\\\x0a*/\\xc3\\xa9'"));
        QCOMPARE(QString::fromStdString(codegen::cppLiteral("\"?\\")), QString("\"\\\"\\?\\\\\\\\\""));
        QCOMPARE(QString::fromStdString(codegen::pythonLiteral("'\"\n")), QString("\"'\\\"\\\\x0a\""));
    }

    void refusesInvalidSchedule()
    {
        const Model model = loadOnnx(test::sourcePath("resources/models/inception_sample.onnx").toStdString());
        const Topology topo = buildTopology(model.graph);
        const CostTable costs =
            CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{}, EdgeCostParameters{});
        Schedule s = planSchedule(SchedulingProblem::of(model.graph, topo, costs, 2), "linear").schedule;
        std::reverse(s.clusters[0].begin(), s.clusters[0].end());  // breaks the global-order rule
        CodegenRequest request;
        request.model = &model;
        request.topo = &topo;
        request.schedule = &s;
        request.outputDir = (work_ + "/invalid").toStdString();
        try {
            generateCode(request);
            QFAIL("an invalid schedule was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(QString::fromStdString(e.message()).contains("invalid schedule"), e.what());
        }
        QVERIFY(!QDir(work_ + "/invalid").exists());
    }

    // The header's command, run by a shell, makes the same program again: the words as typed
    // (a path with a space and a quote in it), the passes the default chose made explicit.
    void headerCommandMakesTheCodeAgain()
    {
        const QString folder = work_ + "/a folder's name";
        QVERIFY(QDir().mkpath(folder));
        const QString model = folder + "/sample.onnx", out = folder + "/code";
        QFile::remove(model);
        QVERIFY(QFile::copy(test::sourcePath("resources/models/inception_sample.onnx"), model));
        QDir(out).removeRecursively();
        const auto r = test::runCli({"export", model, "--lang", "python", "-o", out, "--machine", kMachine, "--no-clone"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        auto read = [&](const QString& file) {
            QFile f(file);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        const QByteArray first = read(out + "/model.py");
        const QString header = QString::fromUtf8(first).section('\n', 1, 1);
        QVERIFY2(header.startsWith("# Command: ramiel export '") && header.endsWith(" --no-clone --passes default"),
                 qPrintable(header));
        QDir(out).removeRecursively();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PATH", QFileInfo(test::cliPath()).absolutePath() + ":" + env.value("PATH"));
        const auto again = runProcess("/bin/sh", {"-c", header.mid(QString("# Command: ").size())}, work_, 120000, env);
        QVERIFY2(again.exitCode == 0, qPrintable(again.out));
        QCOMPARE(read(out + "/model.py"), first);
    }

    // Dropout in training mode is the random dropout of PyTorch, with the node's ratio;
    // in inference mode, the input itself.
    void dropoutInTrainingMode()
    {
        for (bool training : {true, false}) {
            const QString model = work_ + QString("/dropout_%1.onnx").arg(training);
            {
                OnnxBuilder b;
                b.input("x", {2, 8}).output("y", {2, 8});
                b.initializer("r", {}, 0.25f);
                auto* a = b.node("Constant", {}, {"t"}).add_attribute();
                a->set_name("value");
                a->set_type(onnx::AttributeProto::TENSOR);
                a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
                a->mutable_t()->add_int32_data(training);
                b.node("Dropout", {"x", "r", "t"}, {"d"});
                b.node("Relu", {"d"}, {"y"});
                QVERIFY(writeFile(model, b.bytes()));
            }
            for (const auto& [lang, file, call] : {std::tuple<QString, QString, QString>{"python", "model.py", "torch.dropout(x, 0.25, True)"},
                                                   {"cpp", "main.cpp", "at::dropout(x, 0.25, true)"}}) {
                const QString out = work_ + QString("/dropout-%1-%2").arg(lang).arg(training);
                const auto r = test::runCli({"export", model, "--lang", lang, "-o", out, "--machine", kMachine});
                QVERIFY2(r.exitCode == 0, qPrintable(r.err));
                QFile f(out + "/" + file);
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QString text = QString::fromUtf8(f.readAll());
                QVERIFY2(text.contains(call) == training, qPrintable(lang));
                QVERIFY2(text.contains("dropout(") == training, qPrintable(lang));
            }
        }
    }

    // LayerNormalization over every axis, the batch's too: generated at batch 1 (the model's own
    // samples, as given), refused where copies of the graph would each normalize their own.
    void layerNormOverTheBatchOnlyAtBatchOne()
    {
        OnnxBuilder b(17);
        b.input("x", {2, 3}).initializer("scale", {2, 3}, 0.5f).output("y", {2, 3});
        OnnxBuilder::setInt(b.node("LayerNormalization", {"x", "scale"}, {"y"}, "norm"), "axis", 0);
        const QString model = work_ + "/layer_norm_axis0.onnx", outDir = work_ + "/layer_norm_axis0-out";
        QVERIFY(writeFile(model, b.bytes()));
        const auto one = test::runCli({"export", model, "--lang", "python", "-o", outDir, "--machine", kMachine});
        QVERIFY2(one.exitCode == 0, qPrintable(one.err));
        QDir(outDir).removeRecursively();
        const auto two = test::runCli({"export", model, "--lang", "python", "-b", "2", "-o", outDir, "--machine", kMachine});
        QCOMPARE(two.exitCode, 7);
        QVERIFY2(two.err.contains("operator LayerNormalization (node 'norm')") && two.err.contains("at batch 1 only"),
                 qPrintable(two.err));
        QVERIFY(!QDir(outDir).exists());
    }

    // A recurrent layer the generated helpers do not compute (an activation ONNX lacks, the
    // wrong number of them, a clip that is not positive) is refused in one line naming the node
    // and what it has; nothing is written.
    void refusesRecurrentLayersItCannotLower_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("attribute");  // name=value (a string, or an integer)
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown activation") << "RNN" << "activations=Gelu"
                                            << "activation 'Gelu' is not one of ONNX's recurrent activations";
        QTest::newRow("too few activations") << "LSTM" << "activations=Tanh" << "activations lists 1 functions where 3";
        QTest::newRow("clip of 0") << "GRU" << "clip=0" << "is not positive";
    }
    void refusesRecurrentLayersItCannotLower()
    {
        QFETCH(QString, op);
        QFETCH(QString, attribute);
        QFETCH(QString, message);
        const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1, hidden = 4;
        OnnxBuilder b(14);
        b.input("x", {5, 2, 3});
        b.initializer("w", {1, gates * hidden, 3}, 0.1f).initializer("r", {1, gates * hidden, hidden}, 0.2f);
        b.initializer("b", {1, 2 * gates * hidden}, 0.0f);
        auto& n = b.node(op.toStdString(), {"x", "w", "r", "b"}, {"y"}, "layer");
        OnnxBuilder::setInt(n, "hidden_size", hidden);
        if (!attribute.isEmpty()) {
            const QStringList kv = attribute.split('=');
            const std::string name = kv[0].toStdString(), value = kv[1].toStdString();
            bool isInt = false;
            const int number = kv[1].toInt(&isInt);
            if (name == "activations")
                OnnxBuilder::setStrings(n, name, {value});
            else if (name == "clip")
                OnnxBuilder::setFloat(n, name, float(number));
            else if (isInt)
                OnnxBuilder::setInt(n, name, number);
            else
                OnnxBuilder::setString(n, name, value);
        }
        b.output("y", {5, 1, 2, hidden});
        const QString model = work_ + "/recurrent_" + QString(QTest::currentDataTag()).replace(' ', '_') + ".onnx";
        QVERIFY(writeFile(model, b.bytes()));
        const QString outDir = work_ + "/unsupported-out";
        const auto r = test::runCli({"export", model, "--lang", "cpp", "-o", outDir, "--machine", kMachine});
        QCOMPARE(r.exitCode, 7);
        QVERIFY2(r.err.contains("operator " + op + " (node 'layer')") && r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QDir(outDir).exists());
    }

    void refusesUnsupportedAndUnwritable()
    {
        // An operator the generators lack: a clear error naming it and the node, nothing written.
        const QString model = work_ + "/unsupported.onnx";
        {
            OnnxBuilder u;
            u.input("x", {4});
            u.node("RandomUniformLike", {"x"}, {"y"}, "random node");
            u.output("y", {4});
            QVERIFY(writeFile(model, u.bytes()));
        }
        const QString outDir = work_ + "/unsupported-out";
        auto r = test::runCli({"export", model, "--lang", "python", "-o", outDir, "-p", "2", "--machine", kMachine});
        QCOMPARE(r.exitCode, 7);
        QVERIFY2(r.err.contains("RandomUniformLike") && r.err.contains("random node"), qPrintable(r.err));
        QVERIFY(!QDir(outDir).exists());

        // An output folder that cannot be made: Error(Io) naming it.
        QFile blocker(work_ + "/a-file");
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        r = test::runCli({"export", test::sourcePath("resources/models/inception_sample.onnx"), "--lang", "cpp", "-o",
                          blocker.fileName() + "/sub", "--machine", kMachine});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains(blocker.fileName()), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCodegen)
#include "tst_codegen.moc"
