// Graph optimization passes: the registry, each pass on a small hand-built
// model with exact node counts (and a model where it must not fire), and the
// default pipeline on the exported torchvision models.
#include "core/analysis/cost_model.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_export.h"
#include "core/onnx/onnx_import.h"
#include "core/passes/registry.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"
#include "core/util/npy.h"
#include "core/util/error.h"
#include "onnx_builder.h"
#include "test_support.h"
#include "written_out.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <onnx/checker.h>

#include <cmath>

#include <functional>
#include <map>
#include <random>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

// A float initializer with seeded random values in [lo, hi).
void randomInitializer(OnnxBuilder& b, const std::string& name, const std::vector<int64_t>& dims, float lo, float hi,
                       uint32_t seed)
{
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
        t->add_dims(d);
        n *= d;
    }
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i)
        t->add_float_data(dist(gen));
}

void scalarInt64(OnnxBuilder& b, const std::string& name, int64_t value)
{
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(value);
}

void scalarFloat(OnnxBuilder& b, const std::string& name, float value)
{
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
}

onnx::NodeProto& setFloat(onnx::NodeProto& n, const std::string& name, float value)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
    return n;
}

// A Constant node holding a float vector.
void constantNode(OnnxBuilder& b, const std::string& out, const std::vector<float>& values)
{
    auto& n = b.node("Constant", {}, {out});
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(int64_t(values.size()));
    for (float v : values)
        t->add_float_data(v);
}

// Conv weights [m, c, 3, 3] and bias [m], random.
void convParams(OnnxBuilder& b, const std::string& prefix, int64_t m, int64_t c, uint32_t seed)
{
    randomInitializer(b, prefix + "_w", {m, c, 3, 3}, -0.5f, 0.5f, seed);
    randomInitializer(b, prefix + "_b", {m}, -0.5f, 0.5f, seed + 1);
}

onnx::NodeProto& conv(OnnxBuilder& b, const std::string& prefix, const std::string& in, const std::string& out)
{
    auto& n = b.node("Conv", {in, prefix + "_w", prefix + "_b"}, {out}, prefix);
    OnnxBuilder::setInts(n, "pads", {1, 1, 1, 1});
    return n;
}

Model load(const OnnxBuilder& b, const std::string& name) { return loadOnnxFromBytes(b.bytes(), name, {}); }

using test::largestDifference;
using test::relativeDifference;

std::vector<Tensor> runOnce(const Model& m, const std::vector<Tensor>& inputs)
{
    auto compiled = runtime().compile(m);
    compiled->setInputs(inputs);
    compiled->serialExecutor(1)->run();
    return compiled->outputs();
}

// ONNX's C++ checker on exported bytes; the message on failure, empty when valid.
std::string checkerProblem(const std::string& bytes)
{
    onnx::ModelProto proto;
    if (!proto.ParseFromString(bytes))
        return "the exported bytes do not parse";
    try {
        onnx::checker::check_model(proto);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

int count(const Model& m, const std::string& op)
{
    int k = 0;
    for (const Node& n : m.graph.nodes())
        k += n.opType == op;
    return k;
}


// Runs `model` in ONNX Runtime on one .npy input; its first output's data goes into `out`
// (whose type and shape the caller sets).
bool runInOrt(const QString& modules, const QString& model, const QString& inputNpy, const QString& raw, Tensor& out,
              QString& problem)
{
    QProcess ort;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("NODE_PATH", modules);
    ort.setProcessEnvironment(env);
    ort.start("node", {test::sourcePath("tests/support/ort_run.js"), model, inputNpy, raw});
    if (!ort.waitForFinished(120000) || ort.exitCode() != 0) {
        problem = "ONNX Runtime failed: " + QString::fromUtf8(ort.readAllStandardError());
        return false;
    }
    QFile f(raw);
    if (!f.open(QIODevice::ReadOnly)) {
        problem = "no output from ONNX Runtime";
        return false;
    }
    out.data = f.readAll().toStdString();
    return true;
}

// One hand-built model per row: the passes to run and the node counts expected.
// y = the layer normalization of `x` over `axes` written out (ReduceMean, Sub, Pow, ReduceMean,
// Add eps, Sqrt, Div, Mul by a scale, Add a bias when `bias`), its values named after `p`; the
// scale and bias of the last dimension's 8 values (or the last two's, [5, 8]).
void writtenOutLayerNorm(OnnxBuilder& b, const std::string& x, const std::string& p, const std::vector<int64_t>& axes,
                         const std::string& y, bool bias, const std::string& eps)
{
    const std::vector<int64_t> shape = axes.size() == 1 ? std::vector<int64_t>{8} : std::vector<int64_t>{5, 8};
    b.initializer(p + "_two", {}, 2.0f).initializer(p + "_w", shape, 0.8f).initializer(p + "_b", shape, -0.1f);
    auto* w = b.model().mutable_graph()->mutable_initializer(b.model().graph().initializer_size() - 2);
    for (int i = 0; i < w->float_data_size(); ++i)
        w->set_float_data(i, 0.5f + 0.1f * float(i % 7));
    OnnxBuilder::setInts(b.node("ReduceMean", {x}, {p + "_mean"}), "axes", axes);
    b.node("Sub", {x, p + "_mean"}, {p + "_centered"});
    b.node("Pow", {p + "_centered", p + "_two"}, {p + "_squared"});
    OnnxBuilder::setInts(b.node("ReduceMean", {p + "_squared"}, {p + "_variance"}), "axes", axes);
    b.node("Add", {eps, p + "_variance"}, {p + "_variance_eps"});
    b.node("Sqrt", {p + "_variance_eps"}, {p + "_deviation"});
    b.node("Div", {p + "_centered", p + "_deviation"}, {p + "_normalized"});
    if (!bias) {
        b.node("Mul", {p + "_w", p + "_normalized"}, {y});
        return;
    }
    b.node("Mul", {p + "_normalized", p + "_w"}, {p + "_scaled"});
    b.node("Add", {p + "_b", p + "_scaled"}, {y});
}

// An inference BatchNormalization of `channels` channels, random statistics named after `p`.
// A 1x1 Conv "conv" of x (3 -> 4 channels) into "c", and a BatchNormalization's
// statistics for it ("scale", "bias", "mean", "var").
void convBeforeBatchNorm(OnnxBuilder& b)
{
    convParams(b, "conv", 4, 3, 1);
    randomInitializer(b, "scale", {4}, 0.5f, 1.5f, 3);
    randomInitializer(b, "bias", {4}, -1, 1, 4);
    randomInitializer(b, "mean", {4}, -1, 1, 5);
    randomInitializer(b, "var", {4}, 0.2f, 2, 6);
    conv(b, "conv", "x", "c");
}

void batchNormalization(OnnxBuilder& b, const std::string& p, const std::string& x, const std::string& y, int64_t channels)
{
    randomInitializer(b, p + "_scale", {channels}, 0.5f, 1.5f, 3);
    randomInitializer(b, p + "_bias", {channels}, -1, 1, 4);
    randomInitializer(b, p + "_mean", {channels}, -1, 1, 5);
    randomInitializer(b, p + "_var", {channels}, 0.2f, 2, 6);
    b.node("BatchNormalization", {x, p + "_scale", p + "_bias", p + "_mean", p + "_var"}, {y});
}

// Two written-out layer normalizations of x [2, 5, 8] at `opset`: over the last dimension
// with a bias, over the last two (axes 1, 2) without.
OnnxBuilder layerNorms(int opset)
{
    OnnxBuilder b(opset);
    b.input("x", {2, 5, 8}).output("y1", {2, 5, 8}).output("y2", {2, 5, 8});
    b.initializer("eps", {}, 1e-5f);
    writtenOutLayerNorm(b, "x", "a", {-1}, "y1", true, "eps");
    writtenOutLayerNorm(b, "x", "b", {1, 2}, "y2", false, "eps");
    return b;
}

struct PassCase {
    std::function<OnnxBuilder()> build;
    std::string passes;
    int before = 0;
    int after = 0;
    std::map<std::string, int> opsAfter;  // op -> count expected after
    double tolerance = 1e-5;              // largest relative output difference allowed
};

const std::map<std::string, PassCase>& passCases()
{
    static const std::map<std::string, PassCase> cases = {
        // x -> Identity -> Relu -> Identity -> y: both go, the last by renaming Relu's output to y.
        {"identity-chain",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4});
              b.node("Identity", {"x"}, {"a"});
              b.node("Relu", {"a"}, {"b"});
              b.node("Identity", {"b"}, {"y"});
              return b;
          },
          "eliminate-identity", 3, 1, {{"Relu", 1}, {"Identity", 0}}}},
        // Dropout (inference), Cast to its own type, Transpose by (0,1), Reshape to [0, 4].
        {"identity-noops",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4});
              b.initializerInt64("shape", {0, 4});
              b.node("Dropout", {"x"}, {"a"});
              OnnxBuilder::setInt(b.node("Cast", {"a"}, {"c"}), "to", onnx::TensorProto::FLOAT);
              OnnxBuilder::setInts(b.node("Transpose", {"c"}, {"t"}), "perm", {0, 1});
              b.node("Reshape", {"t", "shape"}, {"r"});
              b.node("Relu", {"r"}, {"y"});
              return b;
          },
          "eliminate-identity", 5, 1, {{"Relu", 1}}}},
        // Dropout whose ratio and training_mode come from Constant nodes (as exporters write
        // them): training off goes, and so does training on with a ratio of 0 (swin_t's); training
        // on with a ratio of 0.1 stays.
        {"identity-dropout-constants",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4}).output("z", {2, 4});
              auto constant = [&](const std::string& out, int type, float value) {
                  auto* a = b.node("Constant", {}, {out}).add_attribute();
                  a->set_name("value");
                  a->set_type(onnx::AttributeProto::TENSOR);
                  a->mutable_t()->set_data_type(type);
                  if (type == onnx::TensorProto::BOOL)
                      a->mutable_t()->add_int32_data(int(value));
                  else
                      a->mutable_t()->add_float_data(value);
              };
              constant("ratio0", onnx::TensorProto::FLOAT, 0.0f);
              constant("ratio1", onnx::TensorProto::FLOAT, 0.1f);
              constant("on", onnx::TensorProto::BOOL, 1);
              constant("off", onnx::TensorProto::BOOL, 0);
              b.node("Dropout", {"x", "ratio0", "on"}, {"a"});
              b.node("Dropout", {"a", "ratio1", "off"}, {"c"});
              b.node("Relu", {"c"}, {"y"});
              OnnxBuilder::setInt(b.node("Dropout", {"x", "ratio1", "on"}, {"z"}), "seed", 7);  // the same draw before and after
              return b;
          },
          "eliminate-identity", 8, 6, {{"Dropout", 1}, {"Relu", 1}}}},
        // A Dropout in training mode on constants stays a node: folding would fix one draw
        // for every run. The Relu on a constant folds.
        {"fold-keeps-random-dropout",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4});
              b.initializer("c", {2, 4}, 0.75f).initializer("ratio", {}, 0.5f);
              auto* a = b.node("Constant", {}, {"on"}).add_attribute();
              a->set_name("value");
              a->set_type(onnx::AttributeProto::TENSOR);
              a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
              a->mutable_t()->add_int32_data(1);
              b.node("Relu", {"c"}, {"r"});
              OnnxBuilder::setInt(b.node("Dropout", {"r", "ratio", "on"}, {"d"}), "seed", 3);
              b.node("Add", {"x", "d"}, {"y"});
              return b;
          },
          "fold-constants", 4, 2, {{"Dropout", 1}, {"Relu", 0}, {"Constant", 0}}}},
        // Layer normalization as PyTorch writes it before opset 17: over the last dimension with
        // scale and bias (either operand order), over the last two (positive axes) with scale only.
        // Exported again written out (opset 13), and as ONNX's LayerNormalization from opset 17.
        {"layer-norm", {[] { return layerNorms(13); }, "fuse-layer-norm", 17, 2, {{"LayerNormalization", 2}, {"ReduceMean", 0}}}},
        {"layer-norm-opset-17", {[] { return layerNorms(17); }, "fuse-layer-norm", 17, 2, {{"LayerNormalization", 2}}}},
        // Must not fire: the centered value is read a third time, the axes leave out the last
        // dimension, epsilon is not a constant.
        {"layer-norm-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 5, 8}).input("e", {}).output("y1", {2, 5, 8}).output("y2", {2, 5, 8})
                  .output("y3", {2, 5, 8}).output("c1", {2, 5, 8});
              b.initializer("eps", {}, 1e-5f);
              writtenOutLayerNorm(b, "x", "a", {-1}, "y1", true, "eps");
              b.node("Relu", {"a_centered"}, {"c1"});
              writtenOutLayerNorm(b, "x", "b", {1}, "y2", true, "eps");
              writtenOutLayerNorm(b, "x", "c", {-1}, "y3", true, "e");
              return b;
          },
          "fuse-layer-norm", 28, 28, {{"LayerNormalization", 0}}}},
        // Must not fire: the Identity joins a graph input to a graph output, the
        // Cast changes the type, the Transpose swaps, the Reshape fixes the batch.
        {"identity-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4}).output("z", {4, 2}).output("w", {2, 4}, onnx::TensorProto::DOUBLE)
                  .output("v", {2, 4});
              b.initializerInt64("shape", {2, 4});
              b.node("Identity", {"x"}, {"y"});
              OnnxBuilder::setInts(b.node("Transpose", {"x"}, {"z"}), "perm", {1, 0});
              OnnxBuilder::setInt(b.node("Cast", {"x"}, {"w"}), "to", onnx::TensorProto::DOUBLE);
              b.node("Reshape", {"x", "shape"}, {"v"});
              return b;
          },
          "eliminate-identity", 4, 4, {}}},
        // Shape -> Gather -> Gather -> Mul -> Unsqueeze -> Concat -> Reshape: the sizes after the
        // batch fold, the chain becomes one constant, the Shape is left unread for DCE.
        {"fold-shape-chain",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3, 4}).output("y", {2, 12});
              scalarInt64(b, "one", 1);
              scalarInt64(b, "two", 2);
              b.initializerInt64("axes", {0});
              b.initializerInt64("minus_one", {-1});
              b.node("Shape", {"x"}, {"s"});
              b.node("Gather", {"s", "one"}, {"d1"});
              b.node("Gather", {"s", "two"}, {"d2"});
              b.node("Mul", {"d1", "d2"}, {"p"});
              b.node("Unsqueeze", {"p", "axes"}, {"u"});
              OnnxBuilder::setInt(b.node("Concat", {"minus_one", "u"}, {"target"}), "axis", 0);
              b.node("Reshape", {"x", "target"}, {"y"});
              return b;
          },
          "fold-constants,dce", 7, 1, {{"Reshape", 1}}}},
        // The chain reads the batch size, which Ramiel may change at run time: the target
        // [batch, -1] becomes the constant [0, -1] (0: the input's own first size).
        {"fold-shape-batch-free",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3, 4}).output("y", {2, 12});
              scalarInt64(b, "zero", 0);
              b.initializerInt64("axes", {0});
              b.initializerInt64("minus_one", {-1});
              b.node("Shape", {"x"}, {"s"});
              b.node("Gather", {"s", "zero"}, {"d0"});
              b.node("Unsqueeze", {"d0", "axes"}, {"u"});
              OnnxBuilder::setInt(b.node("Concat", {"u", "minus_one"}, {"target"}), "axis", 0);
              b.node("Reshape", {"x", "target"}, {"y"});
              return b;
          },
          "fold-constants,dce", 5, 1, {{"Reshape", 1}}}},
        // Must not fire: a Range as long as the batch stays a computation.
        {"fold-shape-batch-kept",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3}).output("y", {2, 3});
              scalarInt64(b, "zero", 0);
              scalarFloat(b, "start", 0);
              scalarFloat(b, "step", 1);
              b.initializerInt64("axes", {1});
              b.node("Shape", {"x"}, {"s"});
              b.node("Gather", {"s", "zero"}, {"d0"});
              OnnxBuilder::setInt(b.node("Cast", {"d0"}, {"f"}), "to", onnx::TensorProto::FLOAT);
              b.node("Range", {"start", "f", "step"}, {"r"});
              b.node("Unsqueeze", {"r", "axes"}, {"u"});
              b.node("Add", {"x", "u"}, {"y"});
              return b;
          },
          "fold-constants,dce", 6, 6, {{"Shape", 1}}}},
        // ConstantOfShape of 32 MiB -> ReduceSum -> Add: the sum folds, the large tensor is not
        // embedded (it stays a node, which DCE then removes as nobody reads it).
        {"fold-keeps-large-results-out",
         {[] {
              OnnxBuilder b;
              b.input("x", {1}).output("y", {1, 1, 1});
              b.initializerInt64("shape", {2048, 2048, 2});
              b.node("ConstantOfShape", {"shape"}, {"big"});
              b.node("ReduceSum", {"big"}, {"s"});
              b.node("Add", {"x", "s"}, {"y"});
              return b;
          },
          "fold-constants,dce", 3, 1, {{"Add", 1}}}},
        // Constant -> Cast(double) -> Cast(float) -> Add: the constant side folds.
        {"fold-constant-cast",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4});
              constantNode(b, "c", {1, 2, 3, 4});
              OnnxBuilder::setInt(b.node("Cast", {"c"}, {"cd"}), "to", onnx::TensorProto::DOUBLE);
              OnnxBuilder::setInt(b.node("Cast", {"cd"}, {"cf"}), "to", onnx::TensorProto::FLOAT);
              b.node("Add", {"x", "cf"}, {"y"});
              return b;
          },
          "fold-constants", 4, 1, {{"Add", 1}}}},
        // Must not fire: the constant and its Cast are graph outputs themselves.
        {"fold-must-not-fire-output",
         {[] {
              OnnxBuilder b;
              b.input("x", {4}).output("y", {4}).output("c", {4}).output("cd", {4}, onnx::TensorProto::DOUBLE);
              constantNode(b, "c", {1, 2, 3, 4});
              OnnxBuilder::setInt(b.node("Cast", {"c"}, {"cd"}), "to", onnx::TensorProto::DOUBLE);
              b.node("Add", {"x", "c"}, {"y"});
              return b;
          },
          "fold-constants", 3, 3, {{"Constant", 1}, {"Cast", 1}}}},
        // Conv -> BatchNormalization: one Conv with new weights.
        {"fuse-conv-bn",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y", {1, 4, 8, 8});
              convBeforeBatchNorm(b);
              b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"});
              return b;
          },
          "fuse-conv-bn", 2, 1, {{"Conv", 1}, {"BatchNormalization", 0}}}},
        // Must not fire: the Conv's output is read twice (BatchNormalization and Relu).
        {"fuse-conv-bn-input-used-twice",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y", {1, 4, 8, 8}).output("z", {1, 4, 8, 8});
              convBeforeBatchNorm(b);
              b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"});
              b.node("Relu", {"c"}, {"z"});
              return b;
          },
          "fuse-conv-bn", 3, 3, {{"BatchNormalization", 1}}}},
        // Must not fire: opset 9's BatchNormalization with its statistics outputs trains
        // (normalizes by the batch's own statistics), even where nothing reads them.
        {"fuse-conv-bn-training",
         {[] {
              OnnxBuilder b(9);
              b.input("x", {2, 3, 8, 8}).output("y", {2, 4, 8, 8});
              convBeforeBatchNorm(b);
              b.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y", "rm", "rv", "sm", "sv"});
              return b;
          },
          "fuse-conv-bn", 2, 2, {{"BatchNormalization", 1}}}},
        // Conv + Relu, Clip (bounds as inputs), LeakyRelu, Sigmoid: four fused nodes.
        {"fuse-conv-activation",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8});
              for (const char* y : {"y1", "y2", "y3", "y4"})
                  b.output(y, {1, 4, 8, 8});
              for (int i = 1; i <= 4; ++i)
                  convParams(b, "conv" + std::to_string(i), 4, 3, uint32_t(10 * i));
              scalarFloat(b, "lo", 0.0f);
              scalarFloat(b, "hi", 0.25f);
              conv(b, "conv1", "x", "c1");
              b.node("Relu", {"c1"}, {"y1"});
              conv(b, "conv2", "x", "c2");
              b.node("Clip", {"c2", "lo", "hi"}, {"y2"});
              conv(b, "conv3", "x", "c3");
              setFloat(b.node("LeakyRelu", {"c3"}, {"y3"}), "alpha", 0.2f);
              conv(b, "conv4", "x", "c4");
              b.node("Sigmoid", {"c4"}, {"y4"});
              return b;
          },
          "fuse-conv-activation", 8, 4, {{"FusedConv", 4}, {"Relu", 0}, {"Clip", 0}}}},
        // Conv + SiLU (written out; fuse-silu first), HardSwish, and Add of a summand + SiLU: the
        // activations run as post-ops of the convolution's oneDNN primitive.
        {"fuse-conv-silu",
         {[] {
              OnnxBuilder b(14);  // HardSwish is opset 14
              b.input("x", {1, 3, 8, 8}).input("r", {1, 4, 8, 8});
              for (const char* y : {"y1", "y2", "y3"})
                  b.output(y, {1, 4, 8, 8});
              for (int i = 1; i <= 3; ++i)
                  convParams(b, "conv" + std::to_string(i), 4, 3, uint32_t(20 * i));
              conv(b, "conv1", "x", "c1");
              b.node("Sigmoid", {"c1"}, {"s1"});
              b.node("Mul", {"c1", "s1"}, {"y1"});
              conv(b, "conv2", "x", "c2");
              b.node("HardSwish", {"c2"}, {"y2"});
              conv(b, "conv3", "x", "c3");
              b.node("Add", {"c3", "r"}, {"a3"});
              b.node("Sigmoid", {"a3"}, {"s3"});
              b.node("Mul", {"s3", "a3"}, {"y3"});
              return b;
          },
          "fuse-silu,fuse-conv-activation", 9, 3, {{"FusedConv", 3}, {"Silu", 0}, {"HardSwish", 0}}}},
        // HardSwish written out as PyTorch does before opset 14 (HardSigmoid 1/6, 1/2, Mul by its
        // input, either order): after a Conv it joins the FusedConv (exported again as HardSigmoid
        // and Mul: opset 13 has no HardSwish), on a graph input it is ai.ramiel.HardSwish; a
        // HardSigmoid of another slope stays.
        {"fuse-hardswish",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y1", {1, 4, 8, 8}).output("y2", {1, 3, 8, 8}).output("y3", {1, 3, 8, 8});
              convParams(b, "conv1", 4, 3, 7);
              conv(b, "conv1", "x", "c1");
              setFloat(setFloat(b.node("HardSigmoid", {"c1"}, {"h1"}), "alpha", 1.0f / 6.0f), "beta", 0.5f);
              b.node("Mul", {"c1", "h1"}, {"y1"});
              setFloat(b.node("HardSigmoid", {"x"}, {"h2"}), "alpha", 0.2f);
              b.node("Mul", {"x", "h2"}, {"y2"});
              setFloat(setFloat(b.node("HardSigmoid", {"x"}, {"h3"}), "alpha", 1.0f / 6.0f), "beta", 0.5f);
              b.node("Mul", {"h3", "x"}, {"y3"});
              return b;
          },
          "fuse-hardswish,fuse-conv-activation", 7, 4, {{"FusedConv", 1}, {"HardSwish", 1}, {"HardSigmoid", 1}}}},
        // Conv + Add of a value of its shape + activation (a residual block's end): the Add's
        // other input becomes the summand, with a bias (Relu) and without one (Sigmoid).
        {"fuse-conv-add-activation",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).input("r", {1, 4, 8, 8}).output("y1", {1, 4, 8, 8}).output("y2", {1, 4, 8, 8});
              for (int i = 1; i <= 3; ++i)
                  convParams(b, "conv" + std::to_string(i), 4, 3, uint32_t(10 * i));
              conv(b, "conv1", "x", "c1");
              conv(b, "conv2", "x", "c2");
              b.node("Add", {"c1", "c2"}, {"s1"});
              b.node("Relu", {"s1"}, {"y1"});
              OnnxBuilder::setInts(b.node("Conv", {"x", "conv3_w"}, {"c3"}, "conv3"), "pads", {1, 1, 1, 1});
              b.node("Add", {"r", "c3"}, {"s2"});
              b.node("Sigmoid", {"s2"}, {"y2"});
              return b;
          },
          "fuse-conv-activation", 7, 3, {{"FusedConv", 2}, {"Add", 0}, {"Conv", 1}}}},
        // An Add that broadcasts (not the Conv's shape) stays; an Add whose sum is also a graph
        // output is fused without the Relu after it (the fused node writes the sum).
        {"fuse-conv-add-partial",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).input("r", {1, 4, 8, 8}).output("y1", {1, 4, 8, 8}).output("y2", {1, 4, 8, 8})
                  .output("s2", {1, 4, 8, 8});
              convParams(b, "conv1", 4, 3, 1);
              convParams(b, "conv2", 4, 3, 2);
              randomInitializer(b, "shift", {4, 1, 1}, -1, 1, 3);
              conv(b, "conv1", "x", "c1");
              b.node("Add", {"c1", "shift"}, {"s1"});
              b.node("Relu", {"s1"}, {"y1"});
              conv(b, "conv2", "x", "c2");
              b.node("Add", {"c2", "r"}, {"s2"});
              b.node("Relu", {"s2"}, {"y2"});
              return b;
          },
          "fuse-conv-activation", 6, 5, {{"FusedConv", 1}, {"Add", 1}, {"Relu", 2}}}},
        // Must not fire: the Conv's output is also a graph output; the Clip's bound is not constant.
        {"fuse-conv-activation-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).input("hi", {}).output("c1", {1, 4, 8, 8}).output("y1", {1, 4, 8, 8})
                  .output("y2", {1, 4, 8, 8});
              convParams(b, "conv1", 4, 3, 1);
              convParams(b, "conv2", 4, 3, 2);
              scalarFloat(b, "lo", 0.0f);
              conv(b, "conv1", "x", "c1");
              b.node("Relu", {"c1"}, {"y1"});
              conv(b, "conv2", "x", "c2");
              b.node("Clip", {"c2", "lo", "hi"}, {"y2"});
              return b;
          },
          "fuse-conv-activation", 4, 4, {{"FusedConv", 0}}}},
        // SqueezeNet's fire module end: a Concat of three parts (two convolutions and the graph's
        // input) read only by a Conv (+ Relu), and a Concat read only by a MaxPool read only by a
        // 1x1 Conv: partial convolutions summed (one plain Conv and the rest accumulating into
        // it, FusedConv's summand), the pool moved before the second Concat, one per part; no
        // Concat is left.
        {"split-concat-conv",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 6, 6}).output("y1", {1, 7, 6, 6}).output("y2", {1, 5, 3, 3});
              convParams(b, "a", 6, 4, 1);
              convParams(b, "b", 5, 4, 3);
              convParams(b, "c1", 7, 15, 5);
              conv(b, "a", "x", "a");
              conv(b, "b", "x", "b");
              OnnxBuilder::setInt(b.node("Concat", {"a", "b", "x"}, {"cat1"}), "axis", 1);
              conv(b, "c1", "cat1", "c1");
              b.node("Relu", {"c1"}, {"y1"});
              OnnxBuilder::setInt(b.node("Concat", {"a", "b"}, {"cat2"}), "axis", -3);
              auto& pool = b.node("MaxPool", {"cat2"}, {"p"});
              OnnxBuilder::setInts(pool, "kernel_shape", {2, 2});
              OnnxBuilder::setInts(pool, "strides", {2, 2});
              randomInitializer(b, "c2_w", {5, 11, 1, 1}, -0.5f, 0.5f, 7);
              b.node("Conv", {"p", "c2_w"}, {"y2"});
              return b;
          },
          "split-concat-conv,fuse-conv-activation", 8, 9,
          {{"Concat", 0}, {"MaxPool", 2}, {"Conv", 4}, {"FusedConv", 3}, {"Add", 0}, {"Relu", 0}}}},
        // Must not fire: a Concat also read by another node; one read by a Conv of two groups;
        // one along the pixels; a pool whose reader is no convolution.
        {"split-concat-conv-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 6, 6}).output("y1", {1, 4, 6, 6}).output("y2", {1, 8, 6, 6})
                  .output("y3", {1, 4, 6, 6}).output("y4", {1, 4, 12, 6}).output("y5", {1, 8, 3, 3});
              convParams(b, "a", 4, 4, 1);
              convParams(b, "g", 4, 4, 3);
              conv(b, "a", "x", "a");
              OnnxBuilder::setInt(b.node("Concat", {"a", "x"}, {"cat1"}), "axis", 1);
              randomInitializer(b, "c1_w", {4, 8, 1, 1}, -0.5f, 0.5f, 5);
              b.node("Conv", {"cat1", "c1_w"}, {"y1"});
              b.node("Relu", {"cat1"}, {"y2"});
              OnnxBuilder::setInt(b.node("Concat", {"a", "x"}, {"cat2"}), "axis", 1);
              OnnxBuilder::setInt(conv(b, "g", "cat2", "y3"), "group", 2);
              OnnxBuilder::setInt(b.node("Concat", {"a", "x"}, {"cat3"}), "axis", 2);
              b.node("Relu", {"cat3"}, {"y4"});
              OnnxBuilder::setInt(b.node("Concat", {"a", "x"}, {"cat4"}), "axis", 1);
              auto& pool = b.node("MaxPool", {"cat4"}, {"y5"});
              OnnxBuilder::setInts(pool, "kernel_shape", {2, 2});
              OnnxBuilder::setInts(pool, "strides", {2, 2});
              return b;
          },
          "split-concat-conv", 10, 10, {{"Concat", 4}, {"MaxPool", 1}}}},
        // Pads of zeros: into an AveragePool (which then counts the padded cells), into a
        // Conv (pads added to its own), and a Pad of nothing before a MaxPool dropped.
        {"fuse-pad",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y1", {1, 3, 8, 8}).output("y2", {1, 4, 10, 10})
                  .output("y3", {1, 3, 4, 4});
              b.initializerInt64("one", {0, 0, 1, 1, 0, 0, 1, 1});
              b.initializerInt64("none", {0, 0, 0, 0, 0, 0, 0, 0});
              b.node("Pad", {"x", "one"}, {"p1"});
              auto& avg = b.node("AveragePool", {"p1"}, {"y1"});
              OnnxBuilder::setInts(avg, "kernel_shape", {3, 3});
              b.node("Pad", {"x", "one"}, {"p2"});
              convParams(b, "conv", 4, 3, 1);
              conv(b, "conv", "p2", "y2");
              b.node("Pad", {"x", "none"}, {"p3"});
              auto& max = b.node("MaxPool", {"p3"}, {"y3"});
              OnnxBuilder::setInts(max, "kernel_shape", {2, 2});
              OnnxBuilder::setInts(max, "strides", {2, 2});
              return b;
          },
          "fuse-pad", 6, 3, {{"Pad", 0}, {"AveragePool", 1}, {"Conv", 1}}}},
        // Must not fire: a Pad of ones, a reflecting Pad, a Pad of the channels, a Pad
        // before an AveragePool with pads of its own it does not count, and one before a MaxPool.
        {"fuse-pad-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y1", {1, 3, 8, 8}).output("y2", {1, 3, 8, 8})
                  .output("y3", {1, 5, 8, 8}).output("y4", {1, 3, 10, 10}).output("y5", {1, 3, 8, 8});
              b.initializerInt64("one", {0, 0, 1, 1, 0, 0, 1, 1});
              b.initializerInt64("channels", {0, 1, 0, 0, 0, 1, 0, 0});
              scalarFloat(b, "fill", 1.0f);
              b.node("Pad", {"x", "one", "fill"}, {"p1"});
              OnnxBuilder::setInts(b.node("AveragePool", {"p1"}, {"y1"}), "kernel_shape", {3, 3});
              auto& reflect = b.node("Pad", {"x", "one"}, {"p2"});
              auto* mode = reflect.add_attribute();
              mode->set_name("mode");
              mode->set_type(onnx::AttributeProto::STRING);
              mode->set_s("reflect");
              OnnxBuilder::setInts(b.node("AveragePool", {"p2"}, {"y2"}), "kernel_shape", {3, 3});
              b.node("Pad", {"x", "channels"}, {"p3"});
              OnnxBuilder::setInts(b.node("AveragePool", {"p3"}, {"y3"}), "kernel_shape", {1, 1});
              b.node("Pad", {"x", "one"}, {"p4"});
              auto& avg = b.node("AveragePool", {"p4"}, {"y4"});
              OnnxBuilder::setInts(avg, "kernel_shape", {3, 3});
              OnnxBuilder::setInts(avg, "pads", {1, 1, 1, 1});
              b.node("Pad", {"x", "one"}, {"p5"});
              OnnxBuilder::setInts(b.node("MaxPool", {"p5"}, {"y5"}), "kernel_shape", {3, 3});
              return b;
          },
          "fuse-pad", 10, 10, {{"Pad", 5}}}},
        // MatMul + Add of a constant row: Gemm.
        {"fuse-matmul-add",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8}).output("y", {2, 4});
              randomInitializer(b, "w", {8, 4}, -1, 1, 1);
              randomInitializer(b, "bias", {4}, -1, 1, 2);
              b.node("MatMul", {"x", "w"}, {"m"});
              b.node("Add", {"bias", "m"}, {"y"});
              return b;
          },
          "fuse-matmul-add", 2, 1, {{"Gemm", 1}}}},
        // A 3-D MatMul (a linear layer on [batch, tokens, channels]) + a bias row, [N] or
        // [1, 1, N]: ai.ramiel.MatMulAdd.
        {"fuse-matmul-add-3d",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3, 8}).output("y", {2, 3, 4}).output("y2", {2, 3, 4});
              randomInitializer(b, "w", {8, 4}, -1, 1, 1);
              randomInitializer(b, "bias", {4}, -1, 1, 2);
              randomInitializer(b, "bias3", {1, 1, 4}, -1, 1, 3);
              b.node("MatMul", {"x", "w"}, {"m"});
              b.node("Add", {"m", "bias"}, {"y"});
              b.node("MatMul", {"x", "w"}, {"m2"});
              b.node("Add", {"bias3", "m2"}, {"y2"});
              return b;
          },
          "fuse-matmul-add", 4, 2, {{"MatMulAdd", 2}, {"Add", 0}}}},
        // A linear layer then GELU (written out; fuse-gelu first): one MatMulAdd with the GELU as
        // its activation. The second layer's sum is also a graph output: its GELU stays apart.
        {"fuse-matmul-add-gelu",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3, 8}).output("y", {2, 3, 4}).output("s2", {2, 3, 4}).output("y2", {2, 3, 4});
              randomInitializer(b, "w", {8, 4}, -1, 1, 1);
              randomInitializer(b, "bias", {4}, -1, 1, 2);
              scalarFloat(b, "sqrt2", 1.4142135f);
              scalarFloat(b, "one", 1.0f);
              scalarFloat(b, "half", 0.5f);
              for (const std::string k : {"", "2"}) {
                  b.node("MatMul", {"x", "w"}, {"m" + k});
                  b.node("Add", {"m" + k, "bias"}, {"s" + k});
                  b.node("Div", {"s" + k, "sqrt2"}, {"d" + k});
                  b.node("Erf", {"d" + k}, {"e" + k});
                  b.node("Add", {"e" + k, "one"}, {"a" + k});
                  b.node("Mul", {"s" + k, "a" + k}, {"t" + k});
                  b.node("Mul", {"t" + k, "half"}, {"y" + k});
              }
              return b;
          },
          "fuse-gelu,fuse-matmul-add", 14, 3, {{"MatMulAdd", 2}, {"Gelu", 1}, {"Erf", 0}}}},
        // Must not fire: a 3-D MatMul plus a constant that is not a row ([3, 4]), and an Add of a
        // computed value.
        {"fuse-matmul-add-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 3, 8}).input("x2", {2, 8}).input("v", {2, 4}).output("y", {2, 3, 4})
                  .output("y2", {2, 4});
              randomInitializer(b, "w", {8, 4}, -1, 1, 1);
              randomInitializer(b, "plane", {3, 4}, -1, 1, 2);
              b.node("MatMul", {"x", "w"}, {"m"});
              b.node("Add", {"m", "plane"}, {"y"});
              b.node("MatMul", {"x2", "w"}, {"m2"});
              b.node("Add", {"m2", "v"}, {"y2"});
              return b;
          },
          "fuse-matmul-add", 4, 4, {{"Gemm", 0}, {"MatMulAdd", 0}}}},
        // GELU written out: as PyTorch writes it (Div by √2, x on the left), and with Mul by
        // 1/√2 and every operand order swapped.
        {"fuse-gelu",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8}).output("y1", {2, 8}).output("y2", {2, 8});
              scalarFloat(b, "sqrt2", 1.4142135f);
              scalarFloat(b, "inv_sqrt2", 0.70710677f);
              scalarFloat(b, "one", 1.0f);
              scalarFloat(b, "half", 0.5f);
              b.node("Div", {"x", "sqrt2"}, {"d1"});
              b.node("Erf", {"d1"}, {"e1"});
              b.node("Add", {"e1", "one"}, {"a1"});
              b.node("Mul", {"x", "a1"}, {"m1"});
              b.node("Mul", {"m1", "half"}, {"y1"});
              b.node("Mul", {"inv_sqrt2", "x"}, {"d2"});
              b.node("Erf", {"d2"}, {"e2"});
              b.node("Add", {"one", "e2"}, {"a2"});
              b.node("Mul", {"a2", "x"}, {"m2"});
              b.node("Mul", {"half", "m2"}, {"y2"});
              return b;
          },
          "fuse-gelu", 10, 2, {{"Gelu", 2}, {"Erf", 0}}}},
        // Must not fire: the Erf's output also read elsewhere (a graph output), and a
        // scale that is not √2.
        {"fuse-gelu-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8}).output("y1", {2, 8}).output("e1", {2, 8}).output("y2", {2, 8});
              scalarFloat(b, "sqrt2", 1.4142135f);
              scalarFloat(b, "other", 1.5f);
              scalarFloat(b, "one", 1.0f);
              scalarFloat(b, "half", 0.5f);
              b.node("Div", {"x", "sqrt2"}, {"d1"});
              b.node("Erf", {"d1"}, {"e1"});
              b.node("Add", {"e1", "one"}, {"a1"});
              b.node("Mul", {"x", "a1"}, {"m1"});
              b.node("Mul", {"m1", "half"}, {"y1"});
              b.node("Div", {"x", "other"}, {"d2"});
              b.node("Erf", {"d2"}, {"e2"});
              b.node("Add", {"e2", "one"}, {"a2"});
              b.node("Mul", {"x", "a2"}, {"m2"});
              b.node("Mul", {"m2", "half"}, {"y2"});
              return b;
          },
          "fuse-gelu", 10, 10, {{"Gelu", 0}, {"Erf", 2}}}},
        // SiLU written out, in both operand orders of the Mul.
        {"fuse-silu",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8}).output("y1", {2, 8}).output("y2", {2, 8});
              b.node("Sigmoid", {"x"}, {"s1"});
              b.node("Mul", {"x", "s1"}, {"y1"});
              b.node("Sigmoid", {"x"}, {"s2"});
              b.node("Mul", {"s2", "x"}, {"y2"});
              return b;
          },
          "fuse-silu", 4, 2, {{"Silu", 2}, {"Sigmoid", 0}}}},
        // Must not fire: the Sigmoid also read elsewhere, and a Mul by another value
        // (EfficientNet's squeeze-excite scale).
        {"fuse-silu-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8}).input("v", {2, 8}).output("y1", {2, 8}).output("s1", {2, 8}).output("y2", {2, 8});
              b.node("Sigmoid", {"x"}, {"s1"});
              b.node("Mul", {"x", "s1"}, {"y1"});
              b.node("Sigmoid", {"v"}, {"s2"});
              b.node("Mul", {"x", "s2"}, {"y2"});
              return b;
          },
          "fuse-silu", 4, 4, {{"Silu", 0}, {"Sigmoid", 2}}}},
        // ShuffleNet's channel shuffle: after a Concat of two convolutions (channels-last
        // on the runtime) in 2 groups, cut by two Slices; in 3 groups, cut by a Split
        // of unequal parts; on the graph's input (plain layout) read by a Relu; and with
        // the pixels as one dimension (as Ramiel's exporter writes the node back).
        {"fuse-channel-shuffle",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 5, 6}).output("y1", {1, 6, 5, 6}).output("y2", {1, 6, 5, 6})
                  .output("y3", {1, 3, 5, 6}).output("y4", {1, 6, 5, 6}).output("y5", {1, 4, 5, 6})
                  .output("y6", {1, 4, 5, 6});
              convParams(b, "c1", 6, 4, 1);
              convParams(b, "c2", 6, 4, 3);
              convParams(b, "c3", 9, 4, 5);
              conv(b, "c1", "x", "a");
              conv(b, "c2", "x", "b");
              OnnxBuilder::setInt(b.node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
              b.initializerInt64("grouped2", {1, 2, 6, 5, 6});
              b.initializerInt64("back2", {1, -1, 5, 6});
              b.node("Reshape", {"cat", "grouped2"}, {"r1"});
              OnnxBuilder::setInts(b.node("Transpose", {"r1"}, {"t1"}), "perm", {0, 2, 1, 3, 4});
              b.node("Reshape", {"t1", "back2"}, {"s1"});
              b.initializerInt64("zero", {0});
              b.initializerInt64("six", {6});
              b.initializerInt64("big", {1LL << 40});
              b.initializerInt64("axis1", {1});
              b.node("Slice", {"s1", "zero", "six", "axis1"}, {"y1"});
              b.node("Slice", {"s1", "six", "big", "axis1"}, {"y2"});
              conv(b, "c3", "x", "c");
              b.initializerInt64("grouped3", {1, 3, 3, 5, 6});
              b.initializerInt64("back3", {1, 9, 5, 6});
              b.node("Reshape", {"c", "grouped3"}, {"r2"});
              OnnxBuilder::setInts(b.node("Transpose", {"r2"}, {"t2"}), "perm", {0, 2, 1, 3, 4});
              b.node("Reshape", {"t2", "back3"}, {"s2"});
              b.initializerInt64("parts", {3, 6});
              OnnxBuilder::setInt(b.node("Split", {"s2", "parts"}, {"y3", "y4"}), "axis", 1);
              b.initializerInt64("grouped4", {0, 2, 2, 5, 6});
              b.initializerInt64("back4", {0, 4, 5, 6});
              b.node("Reshape", {"x", "grouped4"}, {"r3"});
              OnnxBuilder::setInts(b.node("Transpose", {"r3"}, {"t3"}), "perm", {0, 2, 1, 3, 4});
              b.node("Reshape", {"t3", "back4"}, {"s3"});
              b.node("Relu", {"s3"}, {"y5"});
              b.initializerInt64("flat", {0, 2, 2, -1});
              b.node("Reshape", {"x", "flat"}, {"r4"});
              OnnxBuilder::setInts(b.node("Transpose", {"r4"}, {"t4"}), "perm", {0, 2, 1, 3});
              b.node("Reshape", {"t4", "back4"}, {"y6"});
              return b;
          },
          "fuse-channel-shuffle", 20, 8,
          {{"ChannelShuffle", 4}, {"Concat", 0}, {"Transpose", 0}, {"Reshape", 0}, {"Slice", 0}, {"Split", 0}}}},
        // Must not fire: the Transpose's output also a graph output; a shuffle not
        // reshaped back to the input's shape; another Transpose; and, fusing the shuffle but
        // neither its Concat nor its Slices: a Concat read twice, and a Slice of step 2.
        {"fuse-channel-shuffle-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 5, 6}).output("t1", {1, 2, 2, 5, 6}).output("y1", {1, 4, 5, 6})
                  .output("y2", {1, 4, 30}).output("y3", {1, 4, 6, 5}).output("cat", {1, 8, 5, 6})
                  .output("y4", {1, 4, 5, 6}).output("y5", {1, 4, 5, 6});
              b.initializerInt64("grouped", {1, 2, 2, 5, 6});
              b.initializerInt64("back", {1, 4, 5, 6});
              b.node("Reshape", {"x", "grouped"}, {"r1"});
              OnnxBuilder::setInts(b.node("Transpose", {"r1"}, {"t1"}), "perm", {0, 2, 1, 3, 4});
              b.node("Reshape", {"t1", "back"}, {"y1"});
              b.initializerInt64("flat", {1, 2, 2, 30});
              b.node("Reshape", {"x", "flat"}, {"r2"});
              OnnxBuilder::setInts(b.node("Transpose", {"r2"}, {"t2"}), "perm", {0, 2, 1, 3});
              b.initializerInt64("rows", {1, 4, 30});
              b.node("Reshape", {"t2", "rows"}, {"y2"});
              b.node("Reshape", {"x", "grouped"}, {"r3"});
              OnnxBuilder::setInts(b.node("Transpose", {"r3"}, {"t3"}), "perm", {0, 1, 2, 4, 3});
              b.initializerInt64("swapped", {1, 4, 6, 5});
              b.node("Reshape", {"t3", "swapped"}, {"y3"});
              OnnxBuilder::setInt(b.node("Concat", {"x", "x"}, {"cat"}), "axis", 1);
              b.initializerInt64("grouped8", {1, 2, 4, 5, 6});
              b.initializerInt64("back8", {1, 8, 5, 6});
              b.node("Reshape", {"cat", "grouped8"}, {"r4"});
              OnnxBuilder::setInts(b.node("Transpose", {"r4"}, {"t4"}), "perm", {0, 2, 1, 3, 4});
              b.node("Reshape", {"t4", "back8"}, {"s4"});
              b.initializerInt64("zero", {0});
              b.initializerInt64("eight", {8});
              b.initializerInt64("axis1", {1});
              b.initializerInt64("two", {2});
              b.node("Slice", {"s4", "zero", "eight", "axis1", "two"}, {"y4"});
              b.initializerInt64("one", {1});
              b.node("Slice", {"s4", "one", "eight", "axis1", "two"}, {"y5"});
              return b;
          },
          "fuse-channel-shuffle", 15, 13,
          {{"ChannelShuffle", 1}, {"Concat", 1}, {"Transpose", 3}, {"Slice", 2}}}},
        // DenseNet's pre-activation: Concat of the input (plain layout on the runtime) and a
        // convolution's output (channels-last), BatchNormalization, Relu; Concat along axis -3
        // of two convolutions, without an activation; a BatchNormalization of the input with
        // a Clip; three parts, one twice, with a LeakyRelu; one part with a Sigmoid.
        {"fuse-batchnorm",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 5, 6}).output("y1", {1, 10, 5, 6}).output("y2", {1, 12, 5, 6})
                  .output("y3", {1, 4, 5, 6}).output("y4", {1, 18, 5, 6}).output("y5", {1, 6, 5, 6});
              convParams(b, "c1", 6, 4, 1);
              convParams(b, "c2", 6, 4, 3);
              conv(b, "c1", "x", "a");
              conv(b, "c2", "x", "b");
              OnnxBuilder::setInt(b.node("Concat", {"x", "a"}, {"cat1"}), "axis", 1);
              batchNormalization(b, "bn1", "cat1", "n1", 10);
              b.node("Relu", {"n1"}, {"y1"});
              OnnxBuilder::setInt(b.node("Concat", {"a", "b"}, {"cat2"}), "axis", -3);
              batchNormalization(b, "bn2", "cat2", "y2", 12);
              batchNormalization(b, "bn3", "x", "n3", 4);
              b.initializer("lo", {}, 0.0f);
              b.initializer("hi", {}, 0.5f);
              b.node("Clip", {"n3", "lo", "hi"}, {"y3"});
              OnnxBuilder::setInt(b.node("Concat", {"a", "b", "a"}, {"cat4"}), "axis", 1);
              batchNormalization(b, "bn4", "cat4", "n4", 18);
              setFloat(b.node("LeakyRelu", {"n4"}, {"y4"}), "alpha", 0.1f);
              OnnxBuilder::setInt(b.node("Concat", {"b"}, {"cat5"}), "axis", 1);
              batchNormalization(b, "bn5", "cat5", "n5", 6);
              b.node("Sigmoid", {"n5"}, {"y5"});
              return b;
          },
          "fuse-batchnorm", 15, 7,
          {{"FusedBatchNorm", 5}, {"Concat", 0}, {"BatchNormalization", 0}, {"Relu", 0}, {"Clip", 0}, {"Conv", 2}}}},
        // Fusing the activation but not the Concat: one also a graph output; nothing: a
        // BatchNormalization alone, one after a Concat along the height, one whose output
        // another node (the graph's output) reads beside its Relu.
        {"fuse-batchnorm-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4, 5, 6}).output("cat1", {1, 12, 5, 6}).output("y1", {1, 12, 5, 6})
                  .output("y2", {1, 4, 5, 6}).output("y3", {1, 4, 10, 6}).output("n4", {1, 4, 5, 6})
                  .output("y4", {1, 4, 5, 6});
              convParams(b, "c1", 6, 4, 1);
              convParams(b, "c2", 6, 4, 3);
              conv(b, "c1", "x", "a");
              conv(b, "c2", "x", "b");
              OnnxBuilder::setInt(b.node("Concat", {"a", "b"}, {"cat1"}), "axis", 1);
              batchNormalization(b, "bn1", "cat1", "n1", 12);
              b.node("Relu", {"n1"}, {"y1"});
              batchNormalization(b, "bn2", "x", "y2", 4);
              OnnxBuilder::setInt(b.node("Concat", {"x", "x"}, {"cat3"}), "axis", 2);
              batchNormalization(b, "bn3", "cat3", "y3", 4);
              batchNormalization(b, "bn4", "x", "n4", 4);
              b.node("Relu", {"n4"}, {"y4"});
              return b;
          },
          "fuse-batchnorm", 10, 9, {{"FusedBatchNorm", 1}, {"Concat", 2}, {"BatchNormalization", 3}, {"Relu", 1}}}},
        // Group normalizations as PyTorch exports them: after a Conv, restored to Shape(x), then
        // a Relu; on the graph input, restored to the constant fold-constants leaves ([-1, 8, 6,
        // 5]), then a SiLU written out (fuse-silu first); one group per channel, no activation
        // to take (its Add's output is a graph output).
        {"fuse-group-norm",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8, 6, 5}).output("y1", {2, 16, 6, 5}).output("y2", {2, 8, 6, 5}).output("y3", {2, 8, 6, 5});
              convParams(b, "conv", 16, 8, 40);
              conv(b, "conv", "x", "c");
              test::writtenOutGroupNorm(b, "c", "a", 16, 4, 4, "n1");
              b.node("Relu", {"n1"}, {"y1"});
              test::writtenOutGroupNorm(b, "x", "b", 8, 2, 4, "n2", {-1, 8, 6, 5});
              b.node("Sigmoid", {"n2"}, {"s2"});
              b.node("Mul", {"n2", "s2"}, {"y2"});
              test::writtenOutGroupNorm(b, "x", "c", 8, 8, 4, "y3");
              return b;
          },
          "fuse-silu,fuse-group-norm", 21, 4, {{"FusedGroupNorm", 3}, {"InstanceNormalization", 0}, {"Reshape", 0}, {"Shape", 0}}}},
        // Must not fire: the batch written as a number ([2, 4, -1]: another batch would be
        // normalized across its images), the normalized rows read twice, groups that are not
        // whole channels (3 groups of 8 channels).
        {"fuse-group-norm-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 8, 6, 5}).output("y1", {2, 8, 6, 5}).output("y2", {2, 8, 6, 5}).output("y3", {2, 8, 6, 5});
              b.output("rows", {2, 4, 60});
              test::writtenOutGroupNorm(b, "x", "a", 8, 4, 4, "y1");
              for (auto& t : *b.model().mutable_graph()->mutable_initializer())
                  if (t.name() == "a_grouped")
                      t.set_int64_data(0, 2);
              test::writtenOutGroupNorm(b, "x", "b", 8, 4, 4, "y2");
              b.node("Identity", {"b_normalized"}, {"rows"});
              test::writtenOutGroupNorm(b, "x", "c", 8, 3, 4, "y3");
              return b;
          },
          "fuse-group-norm", 19, 19, {{"InstanceNormalization", 3}}}},
        // Conv+Relu -> MaxPool -> Conv: int8 from the first QuantizeLinear to the last
        // DequantizeLinear (the requirements fuse the Relu first).
        {"quantize",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).output("y", {1, 4, 4, 4});
              convParams(b, "conv1", 4, 3, 1);
              convParams(b, "conv2", 4, 4, 2);
              conv(b, "conv1", "x", "c1");
              b.node("Relu", {"c1"}, {"r1"});
              auto& pool = b.node("MaxPool", {"r1"}, {"p1"});
              OnnxBuilder::setInts(pool, "kernel_shape", {2, 2});
              OnnxBuilder::setInts(pool, "strides", {2, 2});
              conv(b, "conv2", "p1", "y");
              return b;
          },
          "quantize", 4, 5, {{"QuantizeLinear", 1}, {"QLinearConv", 2}, {"MaxPool", 1}, {"DequantizeLinear", 1}},
          0.05}},
        // Must not fire: a Conv fused with Sigmoid (not exact in int8) and a MatMul of two inputs.
        {"quantize-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 3, 8, 8}).input("a", {2, 8}).input("m", {8, 4}).output("y1", {1, 4, 8, 8})
                  .output("y2", {2, 4});
              convParams(b, "conv1", 4, 3, 1);
              conv(b, "conv1", "x", "c1");
              b.node("Sigmoid", {"c1"}, {"y1"});
              b.node("MatMul", {"a", "m"}, {"y2"});
              return b;
          },
          "quantize", 3, 2, {{"FusedConv", 1}, {"QuantizeLinear", 0}, {"MatMul", 1}}}},
        // A branch that reaches no output, and an initializer nobody reads.
        {"dce",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4});
              b.initializer("unused", {4});
              b.initializer("bias", {4});
              b.node("Relu", {"x"}, {"y"});
              b.node("Add", {"x", "bias"}, {"dead1"});
              b.node("Sigmoid", {"dead1"}, {"dead2"});
              return b;
          },
          "dce", 3, 1, {{"Relu", 1}}}},
        // Must not fire: every node reaches an output.
        {"dce-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4}).output("z", {1, 4});
              b.node("Relu", {"x"}, {"y"});
              b.node("Sigmoid", {"y"}, {"z"});
              return b;
          },
          "dce", 2, 2, {}}},
    };
    return cases;
}

// Swin's window partition in miniature: x [2, 8, 8, 4] -> [batch, H/4, 4, W/4, 4, C]
// -> Transpose -> [batch·(H/4)·(W/4), 16, C] -> MatMul, both targets computed from
// Shape through Div (where ONNX's data propagation stops) and Mul.
OnnxBuilder windowPartition()
{
    OnnxBuilder b;
    b.input("x", {2, 8, 8, 4}).output("y", {8, 16, 4});
    for (int64_t i = 0; i < 4; ++i)
        scalarInt64(b, "i" + std::to_string(i), i);
    scalarInt64(b, "four", 4);
    b.initializerInt64("axes", {0});
    b.initializerInt64("four_1d", {4});
    b.initializerInt64("sixteen", {16});
    randomInitializer(b, "w", {4, 4}, -1, 1, 11);
    b.node("Shape", {"x"}, {"s"});
    for (int i = 0; i < 4; ++i) {
        const std::string d = "d" + std::to_string(i);
        b.node("Gather", {"s", "i" + std::to_string(i)}, {d});
    }
    b.node("Div", {"d1", "four"}, {"h"});
    b.node("Div", {"d2", "four"}, {"w4"});
    for (const char* v : {"d0", "h", "w4", "d3"})
        b.node("Unsqueeze", {v, "axes"}, {std::string(v) + "_u"});
    OnnxBuilder::setInt(b.node("Concat", {"d0_u", "h_u", "four_1d", "w4_u", "four_1d", "d3_u"}, {"t1"}), "axis", 0);
    b.node("Reshape", {"x", "t1"}, {"r1"});
    OnnxBuilder::setInts(b.node("Transpose", {"r1"}, {"p"}), "perm", {0, 1, 3, 2, 4, 5});
    b.node("Shape", {"p"}, {"s2"});
    b.node("Gather", {"s2", "i0"}, {"b2"});
    b.node("Mul", {"b2", "h"}, {"bh"});
    b.node("Mul", {"bh", "w4"}, {"windows"});
    b.node("Unsqueeze", {"windows", "axes"}, {"windows_u"});
    OnnxBuilder::setInt(b.node("Concat", {"windows_u", "sixteen", "d3_u"}, {"t2"}), "axis", 0);
    b.node("Reshape", {"p", "t2"}, {"r2"});
    b.node("MatMul", {"r2", "w"}, {"y"});
    return b;
}

// A segmentation head on a small backbone (FCN's): the logits resized to the image's
// sizes, read from its Shape, and the batch and channels from the features'.
OnnxBuilder headOnFeatures()
{
    OnnxBuilder b;
    b.input("x", {1, 3, 16, 16}).output("y", {1, 8, 32, 32});
    convParams(b, "c1", 8, 3, 21);
    convParams(b, "c2", 8, 8, 23);
    b.initializerInt64("hw", {2, 3});
    b.initializerInt64("nc", {0, 1});
    b.initializerInt64("two", {2}, {});
    conv(b, "c1", "x", "a1");
    b.node("Relu", {"a1"}, {"r1"});
    conv(b, "c2", "r1", "a2");
    b.node("Relu", {"a2"}, {"features"});
    b.node("Shape", {"x"}, {"sx"});
    b.node("Gather", {"sx", "hw"}, {"image"});
    b.node("Mul", {"image", "two"}, {"doubled"});
    b.node("Shape", {"features"}, {"sf"});
    b.node("Gather", {"sf", "nc"}, {"batchChannels"});
    OnnxBuilder::setInt(b.node("Concat", {"batchChannels", "doubled"}, {"sizes"}), "axis", 0);
    b.node("Resize", {"features", "", "", "sizes"}, {"y"});
    return b;
}

// The window partition of swin_t (above) on the channels-last output of a convolution.
OnnxBuilder windowsOnFeatures()
{
    OnnxBuilder b = windowPartition();
    auto& g = *b.model().mutable_graph();
    g.mutable_input(0)->set_name("image");
    auto* dims = g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    dims->mutable_dim(1)->set_dim_value(4);
    dims->mutable_dim(3)->set_dim_value(8);
    convParams(b, "c1", 4, 4, 25);
    conv(b, "c1", "image", "features");
    OnnxBuilder::setInts(b.node("Transpose", {"features"}, {"x"}), "perm", {0, 2, 3, 1});
    return b;
}

}  // namespace

class TestPasses : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void registryTable()
    {
        const auto& table = passes::registeredPasses();
        QVERIFY(table.size() >= 3);
        for (const auto& p : table) {
            QVERIFY2(!p.summary.empty(), p.name.c_str());
            QVERIFY2(bool(p.create), p.name.c_str());
            for (const std::string& r : p.requires)
                QVERIFY2(&passes::findPass(r) != nullptr, r.c_str());
        }
        QCOMPARE(passes::findPass("dce").name, std::string("dce"));
        // Cloning is a scheduling option, not a pass: the error says where it went.
        try {
            passes::findPass("clone");
            QFAIL("'clone' is a pass again");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(e.message().find("--no-clone") != std::string::npos, e.what());
        }
    }

    // docs/passes.md shows the table as --list-passes prints it.
    void docsShowTheTable()
    {
        QFile f(test::sourcePath("docs/passes.md"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.readAll().contains(QByteArray::fromStdString(passes::describePasses())),
                 "docs/passes.md does not show 'ramiel optimize --list-passes' as it is now");
    }

    void parsePassList()
    {
        QVERIFY(passes::parsePassList("none").empty());
        QCOMPARE(passes::parsePassList("dce,eliminate-identity"),
                 (std::vector<std::string>{"eliminate-identity", "dce"}));  // table order
        std::vector<std::string> defaults;
        for (const auto& p : passes::registeredPasses())
            if (p.onByDefault)
                defaults.push_back(p.name);
        QCOMPARE(passes::parsePassList("default"), defaults);
        QCOMPARE(passes::parsePassList("all").size(), passes::registeredPasses().size());
        try {
            passes::parsePassList("dce,bogus");
            QFAIL("an unknown pass was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(e.message().find("bogus") != std::string::npos && e.message().find("dce") != std::string::npos,
                     e.what());
        }
    }

    void pipelineReportsAndDumps()
    {
        Model m = load(passCases().at("identity-chain").build(), "chain.onnx");
        std::vector<std::string> dumped;
        const auto result = passes::runPipeline(m, passes::parsePassList("default"), {},
                                                [&](const std::string& name, const Model&) { dumped.push_back(name); });
        QCOMPARE(result.stats.size(), dumped.size());
        QCOMPARE(result.stats.front().first, std::string("eliminate-identity"));
        QCOMPARE(result.stats.front().second.nodesBefore, 3);
        QCOMPARE(result.stats.front().second.nodesAfter, 1);
        QCOMPARE(result.stats.front().second.removed, 2);
    }

    void handBuilt_data()
    {
        QTest::addColumn<QString>("name");
        for (const auto& [name, c] : passCases())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    // Exact node counts before and after one pass on a small model.
    void handBuilt()
    {
        QFETCH(QString, name);
        const PassCase& c = passCases().at(name.toStdString());
        Model m = load(c.build(), name.toStdString() + ".onnx");
        QCOMPARE(int(m.graph.nodeCount()), c.before);
        const auto result = passes::runPipeline(m, passes::parsePassList(c.passes), {});
        QCOMPARE(int(m.graph.nodeCount()), c.after);
        for (const auto& [op, k] : c.opsAfter)
            QCOMPARE(count(m, op), k);
        for (const Value& v : m.graph.values())
            QVERIFY2(!v.isConstant() || v.initializer->data.size() <= (16u << 20), v.name.c_str());
        // The graph's interface is unchanged.
        const Model original = load(c.build(), "original.onnx");
        QCOMPARE(m.graph.outputs().size(), original.graph.outputs().size());
        for (size_t i = 0; i < m.graph.outputs().size(); ++i)
            QCOMPARE(m.graph.value(m.graph.outputs()[i]).name, original.graph.value(original.graph.outputs()[i]).name);
        buildTopology(m.graph);  // still acyclic, every value defined
        // A second run changes nothing.
        Model twice = m;
        passes::runPipeline(twice, passes::parsePassList(c.passes), {});
        QCOMPARE(int(twice.graph.nodeCount()), c.after);

        // Same outputs as the original on the runtime, and after export and reload.
        auto compiledOriginal = runtime().compile(original);
        const std::vector<Tensor> inputs = compiledOriginal->randomInputs(1, 7);
        const std::vector<Tensor> expected = runOnce(original, inputs);
        const double d = largestDifference(runOnce(m, inputs), expected);
        QVERIFY2(d < c.tolerance, qPrintable(QString::number(d)));
        const std::string bytes = exportOnnx(m);
        const std::string problem = checkerProblem(bytes);
        QVERIFY2(problem.empty(), problem.c_str());
        const Model reloaded = loadOnnxFromBytes(bytes, "reloaded.onnx", {});
        const double r = largestDifference(runOnce(reloaded, inputs), expected);
        QVERIFY2(r < c.tolerance, qPrintable(QString::number(r)));
    }

    void shapeFolding_data()
    {
        QTest::addColumn<bool>("batchDynamic");
        QTest::newRow("dynamic batch") << true;
        QTest::newRow("fixed batch") << false;
    }

    // Shape arithmetic ONNX's inference cannot follow (Div) folds once the sizes are
    // known: no Shape node is left, every size and cost is known, the outputs are
    // unchanged, and under a dynamic batch the result still runs at twice the batch.
    void shapeFolding()
    {
        QFETCH(bool, batchDynamic);
        const Model original = load(windowPartition(), "window.onnx");
        QVERIFY(count(original, "Shape") == 2);
        Model m = original;
        passes::PassContext context;
        context.batchDynamic = batchDynamic;
        const auto result = passes::runPipeline(m, passes::parsePassList("fold-constants,dce"), context);
        qInfo("%s", result.stats.front().second.detail.c_str());
        QCOMPARE(count(m, "Shape"), 0);
        QCOMPARE(int(m.graph.nodeCount()), 4);  // Reshape, Transpose, Reshape, MatMul
        for (const Value& v : m.graph.values())
            QVERIFY2(v.type.shape && v.type.shape->isFullyKnown(), v.name.c_str());
        for (const NodeCost& c : estimateCosts(m.graph))
            QVERIFY2(c.known, c.unknownReason.c_str());
        for (int batch : {1, 2}) {
            if (batch == 2 && !batchDynamic)
                continue;
            const std::vector<Tensor> inputs = runtime().compile(original)->randomInputs(batch, 3);
            const double d = largestDifference(runOnce(m, inputs), runOnce(original, inputs));
            QVERIFY2(d < 1e-6, qPrintable(QString("batch %1: %2").arg(batch).arg(d)));
        }
    }

    void probeRunsWhatSizesNeed_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("batchDynamic");
        QTest::addColumn<QString>("probe");  // the pass's report of the probe
        QTest::addColumn<int>("nodesAfter");
        // The Shapes read the batch's place only: nothing runs at the batch, and at twice
        // it neither convolution (their outputs' batch leads, as the input's).
        QTest::newRow("segmentation head") << "head" << true << "a probe ran 7 of 11 nodes" << 8;
        QTest::newRow("segmentation head, fixed batch") << "head" << false << "" << 5;
        // The sizes after the window partition's Reshape need a run, the convolution's not; at
        // twice the batch the Transpose runs too (its output's batch is not known to lead).
        QTest::newRow("windows") << "windows" << true << "a probe ran 23 of 24 nodes and found the sizes of 5 values" << 6;
        QTest::newRow("windows, fixed batch") << "windows" << false << "a probe ran 21 of 24 nodes and found the sizes of 5 values" << 6;
    }

    // The probe of fold-constants runs only the nodes that the sizes it must learn depend
    // on, not what produces values whose sizes inference already gave; what folds and the
    // outputs are as when it ran them all.
    void probeRunsWhatSizesNeed()
    {
        QFETCH(QString, model);
        QFETCH(bool, batchDynamic);
        QFETCH(QString, probe);
        QFETCH(int, nodesAfter);
        const Model original = load(model == "head" ? headOnFeatures() : windowsOnFeatures(), "probe.onnx");
        Model m = original;
        passes::PassContext context;
        context.batchDynamic = batchDynamic;
        const auto result = passes::runPipeline(m, passes::parsePassList("fold-constants,dce"), context);
        const std::string detail = result.stats.front().second.detail;
        qInfo("%s", detail.c_str());
        if (probe.isEmpty())
            QVERIFY2(detail.find("probe") == std::string::npos, detail.c_str());
        else
            QVERIFY2(detail.find(probe.toStdString()) != std::string::npos, detail.c_str());
        QCOMPARE(int(m.graph.nodeCount()), nodesAfter);
        for (const Value& v : m.graph.values())
            QVERIFY2(v.type.shape && v.type.shape->isFullyKnown(), v.name.c_str());
        for (int batch : {1, 2}) {
            if (batch == 2 && !batchDynamic)
                continue;
            const std::vector<Tensor> inputs = runtime().compile(original)->randomInputs(batch, 5);
            const double d = largestDifference(runOnce(m, inputs), runOnce(original, inputs));
            QVERIFY2(d < 1e-6, qPrintable(QString("batch %1: %2").arg(batch).arg(d)));
        }
    }

    void quantization_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("googlenet") << "googlenet";
        QTest::newRow("resnet18") << "resnet18";
        // googlenet's features vanish with random weights (docs/passes.md); squeezenet has
        // int8 concatenations and an output that depends on the input.
        QTest::newRow("squeezenet1_0") << "squeezenet1_0";
    }

    // Int8: the top-1 class agrees with float on at least 9 of 10 seeded random
    // inputs (calibrated on 4 others); the exported file passes the checker and
    // gives the same outputs once reloaded.
    void quantization()
    {
        QFETCH(QString, name);
        const Model original = loadOnnx(test::modelPath(name).toStdString());
        Model q = original;
        passes::PassContext context;
        context.seed = 1000;
        const auto result = passes::runPipeline(q, passes::parsePassList("default,quantize"), context);
        const auto& stats = result.stats.back();
        QCOMPARE(stats.first, std::string("quantize"));
        qInfo("%s: %s", qPrintable(name), stats.second.detail.c_str());
        QVERIFY(stats.second.fused > 0);

        auto compiledFloat = runtime().compile(original);
        auto compiledInt8 = runtime().compile(q);
        int agree = 0;
        double worst = 0;
        for (uint64_t seed = 0; seed < 10; ++seed) {
            const auto inputs = compiledFloat->randomInputs(1, seed);
            compiledFloat->setInputs(inputs);
            compiledFloat->serialExecutor(1)->run();
            compiledInt8->setInputs(inputs);
            compiledInt8->serialExecutor(1)->run();
            const auto f = compiledFloat->outputs()[0].toDoubles(), i8 = compiledInt8->outputs()[0].toDoubles();
            QVERIFY(f && i8 && f->size() == i8->size());
            const auto argmax = [](const std::vector<double>& v) { return std::max_element(v.begin(), v.end()) - v.begin(); };
            agree += argmax(*f) == argmax(*i8);
            worst = std::max(worst, relativeDifference(compiledInt8->outputs()[0], compiledFloat->outputs()[0]));
        }
        qInfo("%s: int8 top-1 agrees with float on %d of 10 inputs; max |difference| / max |float output| %.3g",
              qPrintable(name), agree, worst);
        QVERIFY2(agree >= 9, qPrintable(QString::number(agree)));

        QTemporaryDir dir;
        const QString file = dir.filePath(name + ".int8.onnx");
        saveOnnx(q, file.toStdString());
        QProcess checker;
        checker.start("/usr/bin/python3",
                      {"-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", file});
        QVERIFY(checker.waitForFinished(120000));
        QVERIFY2(checker.exitCode() == 0, checker.readAllStandardError().constData());
        const auto inputs = compiledFloat->randomInputs(1, 3);
        const std::vector<Tensor> int8Outputs = runOnce(q, inputs);
        const double r = largestDifference(runOnce(loadOnnx(file.toStdString()), inputs), int8Outputs);
        QVERIFY2(r < 1e-6, qPrintable(QString::number(r)));

        // ONNX Runtime runs the same int8 file: its QLinear kernels may round differently, so
        // compare against the float output's scale.
        const QString ortModules = test::ortModulesPath();
        if (ortModules.isEmpty())
            QFAIL("onnxruntime-node is missing: scripts/test.sh installs it (npm) into build/ort");
        const QString npy = dir.filePath("input.npy");
        writeNpy(npy.toStdString(), inputs[0]);
        Tensor fromOrt = int8Outputs[0];
        QString problem;
        QVERIFY2(runInOrt(ortModules, file, npy, dir.filePath("ort.raw"), fromOrt, problem), qPrintable(problem));
        const double o = relativeDifference(fromOrt, runOnce(original, inputs)[0]);
        const double own = relativeDifference(int8Outputs[0], runOnce(original, inputs)[0]);
        qInfo("%s: int8 in ONNX Runtime vs float, max |difference| / max |float output| %.3g (Ramiel's int8: %.3g)",
              qPrintable(name), o, own);
        QVERIFY2(o < 0.1, qPrintable(QString::number(o)));
    }

    // ramiel optimize: the listing is the table, errors name the problem, --dump-after and --json work.
    void cli()
    {
        const auto list = test::runCli({"optimize", "--list-passes"});
        QCOMPARE(list.exitCode, 0);
        for (const auto& p : passes::registeredPasses())
            QVERIFY2(list.out.contains(QString::fromStdString(p.name)), qPrintable(list.out));

        const QString model = test::modelPath("squeezenet1_0");
        const auto unknown = test::runCli({"optimize", model, "--passes", "dce,nope"});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.contains("nope") && unknown.err.contains("fold-constants"), qPrintable(unknown.err));

        // A folder that cannot be written (a path through a regular file: also refused to root).
        const auto unwritable = test::runCli({"optimize", model, "-o", model + "/out.onnx"});
        QCOMPARE(unwritable.exitCode, 3);
        QVERIFY2(unwritable.err.contains("out.onnx"), qPrintable(unwritable.err));

        QTemporaryDir dir;
        const QString out = dir.filePath("sq.onnx");
        const auto dumped = test::runCli({"optimize", model, "-o", out, "--dump-after", "fuse-conv-activation"});
        QCOMPARE(dumped.exitCode, 0);
        QVERIFY2(dumped.out.contains("--- after fuse-conv-activation") && dumped.out.contains("ai.ramiel.FusedConv"),
                 qPrintable(dumped.out.left(2000)));
        QVERIFY(!dumped.out.contains("--- after dce"));
        // Written unfused: Conv + Relu, and each of the 8 Concats as two partial Convs and an Add
        // (and 2 pools as 4).
        QCOMPARE(int(loadOnnx(out.toStdString()).graph.nodeCount()), 75);

        const auto json = test::runCli({"optimize", model, "--json"});
        QCOMPARE(json.exitCode, 0);
        const QJsonDocument doc = QJsonDocument::fromJson(json.out.toUtf8());
        QVERIFY2(doc.isObject(), qPrintable(json.out));
        QCOMPARE(doc.object()["nodesBefore"].toInt(), 82);
        QCOMPARE(doc.object()["nodesAfter"].toInt(), 41);
    }

    void parallelEqualsSerial_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("passes");
        QTest::newRow("squeezenet1_0 default") << "squeezenet1_0" << "default";
        QTest::newRow("googlenet int8") << "googlenet" << "default,quantize";
    }

    // Optimized models (fused and quantized kernels) run in parallel, with graph copies
    // sharing each node's prepacked weights, exactly as they run serially.
    void parallelEqualsSerial()
    {
        QFETCH(QString, name);
        QFETCH(QString, passes);
        Model m = loadOnnx(test::modelPath(name).toStdString());
        passes::runPipeline(m, passes::parsePassList(passes.toStdString()), {});
        const Topology topo = buildTopology(m.graph);
        const CostTable costs =
            CostTable::fromStatic(m.graph, topo, estimateCosts(m.graph), MachineConstants{}, EdgeCostParameters{});
        auto compiled = runtime().compile(m);
        for (const auto& [batch, degree] : std::vector<std::pair<int, int>>{{1, 1}, {4, 2}, {4, 4}}) {
            compiled->setInputs(compiled->randomInputs(batch, 5));
            compiled->serialExecutor(1)->run();
            const std::vector<Tensor> serial = compiled->outputs();
            const Schedule schedule =
                planSchedule(SchedulingProblem::of(m.graph, topo, costs, 4, batch, degree), "linear").schedule;
            auto parallel = compiled->parallelExecutor(schedule);
            for (int run = 0; run < 5; ++run) {
                parallel->run();
                const double d = largestDifference(compiled->outputs(), serial);
                QVERIFY2(d < 1e-5, qPrintable(QString("batch %1, d %2: %3").arg(batch).arg(degree).arg(d)));
            }
        }
    }

    // torchvision's swin_t (opset 17, symbolic batch, exported by the fixture), sized
    // 1x3x224x224 as --shape does: it runs (ScatterND builds its attention masks); after the
    // default passes no Shape node is left, every node's cost is known, and the optimized
    // model agrees with PyTorch, serially and in parallel, at its own batch and at twice it
    // (the batch stays free), and with ONNX Runtime.
    void swinTransformer()
    {
        const QString base = test::modelsDir() + "/swin_t";
        ImportOptions options;
        addInputShape(options, "input=1,3,224,224");  // the export leaves the batch symbolic
        const Model original = loadOnnx((base + ".onnx").toStdString(), options);
        const Tensor input = readNpy((base + ".input.npy").toStdString());
        const Tensor reference = readNpy((base + ".output.npy").toStdString());
        const double o = relativeDifference(runOnce(original, {input})[0], reference);
        qInfo("swin_t as exported: %zu nodes, %d Shape; vs PyTorch %.2e", original.graph.nodeCount(),
              count(original, "Shape"), o);
        QVERIFY2(o < 1e-4, qPrintable(QString::number(o)));

        Model m = original;
        QElapsedTimer timer;
        timer.start();
        const auto result = passes::runPipeline(m, passes::parsePassList("default"), {});
        for (const auto& [pass, st] : result.stats)
            qInfo("  %s: %d -> %d  %s", pass.c_str(), st.nodesBefore, st.nodesAfter, st.detail.c_str());
        qInfo("swin_t after the default passes: %zu nodes in %lld ms", m.graph.nodeCount(), timer.elapsed());
        QCOMPARE(count(m, "Shape"), 0);
        double flops = 0;
        for (const NodeCost& c : estimateCosts(m.graph)) {
            QVERIFY2(c.known, c.unknownReason.c_str());
            flops += c.flops;
        }
        qInfo("swin_t: %.3f GFLOPs, every cost known", flops / 1e9);

        auto compiled = runtime().compile(m);
        const Topology topo = buildTopology(m.graph);
        const CostTable costs =
            CostTable::fromStatic(m.graph, topo, estimateCosts(m.graph), MachineConstants{}, EdgeCostParameters{});
        for (int batch : {1, 2}) {
            Tensor x = input;
            x.dims[0] *= batch;
            for (int i = 1; i < batch; ++i)
                x.data += input.data;
            compiled->setInputs({x});
            compiled->serialExecutor(1)->run();
            const std::vector<Tensor> serial = compiled->outputs();
            const size_t sample = reference.data.size();
            QCOMPARE(serial[0].data.size(), sample * size_t(batch));
            for (int i = 0; i < batch; ++i) {
                Tensor part = reference;
                part.data = serial[0].data.substr(size_t(i) * sample, sample);
                const double d = relativeDifference(part, reference);
                QVERIFY2(d < 1e-4, qPrintable(QString("batch %1, sample %2: %3").arg(batch).arg(i).arg(d)));
            }
            const Schedule schedule =
                planSchedule(SchedulingProblem::of(m.graph, topo, costs, 2, batch, batch), "linear").schedule;
            compiled->parallelExecutor(schedule)->run();
            const double p = largestDifference(compiled->outputs(), serial);
            QVERIFY2(p < 1e-5, qPrintable(QString("parallel, batch %1: %2").arg(batch).arg(p)));
        }

        QTemporaryDir dir;
        const QString file = dir.filePath("swin_t.opt.onnx");
        saveOnnx(m, file.toStdString());
        const QString ortModules = test::ortModulesPath();
        if (ortModules.isEmpty())
            QFAIL("onnxruntime-node is missing: scripts/test.sh installs it (npm) into build/ort");
        Tensor fromOrt = reference;
        QString problem;
        QVERIFY2(runInOrt(ortModules, file, base + ".input.npy", dir.filePath("ort.raw"), fromOrt, problem),
                 qPrintable(problem));
        const double r = relativeDifference(fromOrt, reference);
        qInfo("swin_t: ONNX Runtime on the optimized file vs PyTorch, max relative difference %.2e", r);
        QVERIFY2(r < 1e-4, qPrintable(QString::number(r)));
    }

    void torchvision_data() { test::addTorchvisionRows(); }

    // The default pipeline on a real model: outputs preserved, idempotent,
    // exported file valid for onnx.checker, same outputs once reloaded (and
    // in ONNX Runtime where installed).
    void torchvision()
    {
        QFETCH(QString, name);
        const QString base = test::modelsDir() + "/" + name;
        const Model original = loadOnnx((base + ".onnx").toStdString());
        const std::vector<Tensor> inputs = {readNpy((base + ".input.npy").toStdString())};
        const std::vector<Tensor> expected = runOnce(original, inputs);

        Model m = original;
        QElapsedTimer timer;
        timer.start();
        const auto result = passes::runPipeline(m, passes::parsePassList("default"), {});
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        std::map<std::string, int> before, after;
        for (const Node& n : original.graph.nodes())
            ++before[n.opType];
        for (const Node& n : m.graph.nodes())
            ++after[n.opType];
        qInfo("%s: %zu -> %zu nodes in %.1f ms (Identity %d -> %d, BatchNormalization %d -> %d, FusedConv %d)",
              qPrintable(name), original.graph.nodeCount(), m.graph.nodeCount(), ms, before["Identity"],
              after["Identity"], before["BatchNormalization"], after["BatchNormalization"], after["FusedConv"]);
        QCOMPARE(after["Identity"], 0);
        QVERIFY(m.graph.nodeCount() < original.graph.nodeCount());
        QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));

        const std::vector<Tensor> optimized = runOnce(m, inputs);
        const double d = largestDifference(optimized, expected);
        qInfo("%s: optimized vs original output, max relative difference %.2e", qPrintable(name), d);
        QVERIFY2(d < 1e-4, qPrintable(QString::number(d)));

        // In a batch with another image, on one and two threads, each image gives its output
        // of a run alone, in the first two runs (convolutions with two kernels run each; a
        // batch's Winograd ones image by image, wantsImageByImage, core/runtime/torch).
        auto compiled = runtime().compile(m);
        const Tensor other = compiled->randomInputs(1, 11)[0];
        compiled->setInputs({other});
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> otherAlone = compiled->outputs();
        auto batch = [](Tensor a, const Tensor& b) {
            a.dims[0] += b.dims[0];
            a.data += b.data;
            return a;
        };
        compiled->setInputs({batch(inputs[0], other)});
        for (int threads : {1, 2}) {
            const auto executor = compiled->serialExecutor(threads);
            for (int run = 0; run < 2; ++run) {
                executor->run();
                const double b = relativeDifference(compiled->outputs()[0], batch(optimized[0], otherAlone[0]));
                QVERIFY2(b < 1e-4, qPrintable(QString("batch 2, %1 threads, run %2: %3").arg(threads).arg(run).arg(b)));
            }
        }

        // Idempotent: a second run finds nothing to do.
        Model again = m;
        const auto second = passes::runPipeline(again, passes::parsePassList("default"), {});
        for (const auto& [pass, s] : second.stats)
            QVERIFY2(s.removed == 0 && s.added == 0 && s.fused == 0 && s.nodesAfter == s.nodesBefore,
                     qPrintable(QString::fromStdString(pass + ": " + s.detail)));

        // Export, onnx.checker (the Python package, as users run it), reload.
        QTemporaryDir dir;
        const QString file = dir.filePath(name + ".opt.onnx");
        saveOnnx(m, file.toStdString());
        QProcess checker;
        checker.start("/usr/bin/python3",
                      {"-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", file});
        QVERIFY(checker.waitForFinished(120000));
        QVERIFY2(checker.exitCode() == 0, checker.readAllStandardError().constData());
        const Model reloaded = loadOnnx(file.toStdString());
        const std::vector<Tensor> again2 = runOnce(reloaded, inputs);
        const double r = largestDifference(again2, optimized);
        QVERIFY2(r < 1e-5, qPrintable(QString::number(r)));

        // ONNX Runtime on the exported file.
        const QString ortModules = test::ortModulesPath();
        if (ortModules.isEmpty())
            QFAIL("onnxruntime-node is missing (build/ort, /tmp/ort or $RAMIEL_ORT_NODE_PATH): "
                  "scripts/test.sh installs it (npm) into build/ort");
        Tensor fromOrt = expected[0];
        QString problem;
        QVERIFY2(runInOrt(ortModules, file, base + ".input.npy", dir.filePath("ort.raw"), fromOrt, problem),
                 qPrintable(problem));
        const double o = relativeDifference(fromOrt, expected[0]);
        qInfo("%s: ONNX Runtime on the optimized file vs Ramiel, max relative difference %.2e", qPrintable(name), o);
        QVERIFY2(o < 1e-4, qPrintable(QString::number(o)));
    }
};

QTEST_GUILESS_MAIN(TestPasses)
#include "tst_passes.moc"
