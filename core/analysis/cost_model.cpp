#include "core/analysis/cost_model.h"
#include "core/ir/fused_ops.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace ramiel {

namespace {

enum class Formula {
    View,          // no data moved: metadata changes and aliases
    Elementwise,   // k flops per output element
    Variadic,      // (inputs - 1) flops per output element
    Conv,
    ConvTranspose,
    Gemm,
    MatMul,
    Pool,          // output elements x kernel size
    InputSized,    // k flops per input element (reductions, global pools)
    Recurrent,     // RNN, GRU, LSTM
    Copy,          // moves data, no arithmetic
    Select,        // reads about as much as it writes (Slice, Gather)
    If,
    Loop,
};

struct OpRule {
    Formula formula;
    double k = 0;  // flops per element where the formula uses one
};

const std::unordered_map<std::string, OpRule>& rules()
{
    static const std::unordered_map<std::string, OpRule> table = {
        // Views and aliases: the runtime hands the same storage on.
        {"Reshape", {Formula::View}}, {"Flatten", {Formula::View}}, {"Squeeze", {Formula::View}},
        {"Unsqueeze", {Formula::View}}, {"Identity", {Formula::View}}, {"Dropout", {Formula::View}},
        {"Shape", {Formula::View}}, {"Size", {Formula::View}}, {"Constant", {Formula::View}},
        // Cheap elementwise: one operation per output element.
        {"Add", {Formula::Elementwise, 1}}, {"Sub", {Formula::Elementwise, 1}}, {"Mul", {Formula::Elementwise, 1}},
        {"Div", {Formula::Elementwise, 1}}, {"Neg", {Formula::Elementwise, 1}}, {"Abs", {Formula::Elementwise, 1}},
        {"Relu", {Formula::Elementwise, 1}}, {"LeakyRelu", {Formula::Elementwise, 2}},
        {"PRelu", {Formula::Elementwise, 2}}, {"Clip", {Formula::Elementwise, 2}},
        {"Floor", {Formula::Elementwise, 1}}, {"Ceil", {Formula::Elementwise, 1}}, {"Round", {Formula::Elementwise, 1}},
        {"Sign", {Formula::Elementwise, 1}}, {"Not", {Formula::Elementwise, 1}}, {"And", {Formula::Elementwise, 1}},
        {"Or", {Formula::Elementwise, 1}}, {"Xor", {Formula::Elementwise, 1}}, {"Equal", {Formula::Elementwise, 1}},
        {"Less", {Formula::Elementwise, 1}}, {"LessOrEqual", {Formula::Elementwise, 1}},
        {"Greater", {Formula::Elementwise, 1}}, {"GreaterOrEqual", {Formula::Elementwise, 1}},
        {"Where", {Formula::Elementwise, 1}}, {"Mod", {Formula::Elementwise, 2}},
        {"HardSigmoid", {Formula::Elementwise, 3}}, {"HardSwish", {Formula::Elementwise, 4}},
        {"BitShift", {Formula::Elementwise, 1}}, {"IsNaN", {Formula::Elementwise, 1}}, {"IsInf", {Formula::Elementwise, 1}},
        {"Reciprocal", {Formula::Elementwise, 1}}, {"Cast", {Formula::Elementwise, 1}},
        {"CastLike", {Formula::Elementwise, 1}}, {"BatchNormalization", {Formula::Elementwise, 2}},
        {"QuantizeLinear", {Formula::Elementwise, 3}}, {"DequantizeLinear", {Formula::Elementwise, 2}},
        // Transcendental elementwise: a few operations per element.
        {"Exp", {Formula::Elementwise, 4}}, {"Log", {Formula::Elementwise, 4}}, {"Sqrt", {Formula::Elementwise, 4}},
        {"Pow", {Formula::Elementwise, 8}}, {"Erf", {Formula::Elementwise, 8}}, {"Sigmoid", {Formula::Elementwise, 4}},
        {"Tanh", {Formula::Elementwise, 4}}, {"Softplus", {Formula::Elementwise, 5}}, {"Softsign", {Formula::Elementwise, 3}},
        {"Elu", {Formula::Elementwise, 4}}, {"Selu", {Formula::Elementwise, 5}}, {"Celu", {Formula::Elementwise, 5}},
        {"Gelu", {Formula::Elementwise, 8}}, {"Mish", {Formula::Elementwise, 10}}, {"ThresholdedRelu", {Formula::Elementwise, 1}},
        {"Sin", {Formula::Elementwise, 8}}, {"Cos", {Formula::Elementwise, 8}}, {"Tan", {Formula::Elementwise, 8}},
        {"Asin", {Formula::Elementwise, 8}}, {"Acos", {Formula::Elementwise, 8}}, {"Atan", {Formula::Elementwise, 8}},
        {"Sinh", {Formula::Elementwise, 8}}, {"Cosh", {Formula::Elementwise, 8}}, {"Asinh", {Formula::Elementwise, 8}},
        {"Acosh", {Formula::Elementwise, 8}}, {"Atanh", {Formula::Elementwise, 8}},
        // Row-wise normalizations: several passes over the data.
        {"Softmax", {Formula::Elementwise, 5}}, {"LogSoftmax", {Formula::Elementwise, 5}},
        {"Hardmax", {Formula::Elementwise, 2}}, {"LayerNormalization", {Formula::Elementwise, 8}},
        {"InstanceNormalization", {Formula::Elementwise, 8}}, {"GroupNormalization", {Formula::Elementwise, 8}},
        {"MeanVarianceNormalization", {Formula::Elementwise, 8}}, {"LpNormalization", {Formula::Elementwise, 4}},
        {"LRN", {Formula::Elementwise, 8}},
        {"Sum", {Formula::Variadic}}, {"Mean", {Formula::Variadic}}, {"Max", {Formula::Variadic}},
        {"Min", {Formula::Variadic}},
        {"Conv", {Formula::Conv}}, {"ConvInteger", {Formula::Conv}}, {"QLinearConv", {Formula::Conv}},
        {"ConvTranspose", {Formula::ConvTranspose}},
        {"Gemm", {Formula::Gemm}},
        {"MatMul", {Formula::MatMul}}, {"MatMulInteger", {Formula::MatMul}}, {"QLinearMatMul", {Formula::MatMul}},
        {"MaxPool", {Formula::Pool}}, {"AveragePool", {Formula::Pool}}, {"LpPool", {Formula::Pool}},
        {"GlobalAveragePool", {Formula::InputSized, 1}}, {"GlobalMaxPool", {Formula::InputSized, 1}},
        {"GlobalLpPool", {Formula::InputSized, 2}},
        {"ReduceMean", {Formula::InputSized, 1}}, {"ReduceSum", {Formula::InputSized, 1}},
        {"ReduceMax", {Formula::InputSized, 1}}, {"ReduceMin", {Formula::InputSized, 1}},
        {"ReduceProd", {Formula::InputSized, 1}}, {"ReduceL1", {Formula::InputSized, 2}},
        {"ReduceL2", {Formula::InputSized, 2}}, {"ReduceSumSquare", {Formula::InputSized, 2}},
        {"ReduceLogSum", {Formula::InputSized, 1}}, {"ReduceLogSumExp", {Formula::InputSized, 5}},
        {"ArgMax", {Formula::InputSized, 1}}, {"ArgMin", {Formula::InputSized, 1}},
        {"TopK", {Formula::InputSized, 4}}, {"CumSum", {Formula::InputSized, 1}},
        {"RNN", {Formula::Recurrent}}, {"GRU", {Formula::Recurrent}}, {"LSTM", {Formula::Recurrent}},
        {"Concat", {Formula::Copy}}, {"Split", {Formula::Copy}}, {"Transpose", {Formula::Copy}},
        {"Pad", {Formula::Copy}}, {"Tile", {Formula::Copy}}, {"Expand", {Formula::Copy}},
        {"ConstantOfShape", {Formula::Copy}}, {"DepthToSpace", {Formula::Copy}}, {"SpaceToDepth", {Formula::Copy}},
        {"Resize", {Formula::Elementwise, 4}}, {"Upsample", {Formula::Elementwise, 4}},
        {"Range", {Formula::Copy}}, {"OneHot", {Formula::Copy}}, {"Trilu", {Formula::Copy}},
        {"Slice", {Formula::Select}}, {"Gather", {Formula::Select}}, {"GatherElements", {Formula::Select}},
        {"GatherND", {Formula::Select}}, {"Compress", {Formula::Select}},
        {"ScatterElements", {Formula::Copy}}, {"ScatterND", {Formula::Copy}}, {"NonZero", {Formula::Copy}},
        {"Scatter", {Formula::Copy}}, {"MaxUnpool", {Formula::Copy}}, {"GridSample", {Formula::Elementwise, 8}},
        {"Shrink", {Formula::Elementwise, 2}}, {"DynamicQuantizeLinear", {Formula::Elementwise, 5}},
        {"EyeLike", {Formula::Copy}}, {"ReverseSequence", {Formula::Copy}}, {"Unique", {Formula::InputSized, 8}},
        {"Det", {Formula::InputSized, 8}}, {"HannWindow", {Formula::Elementwise, 8}},
        {"HammingWindow", {Formula::Elementwise, 8}}, {"BlackmanWindow", {Formula::Elementwise, 12}},
        {"NegativeLogLikelihoodLoss", {Formula::InputSized, 2}}, {"SoftmaxCrossEntropyLoss", {Formula::InputSized, 8}},
        {"RandomNormal", {Formula::Elementwise, 10}}, {"RandomUniform", {Formula::Elementwise, 6}},
        {"RandomNormalLike", {Formula::Elementwise, 10}}, {"RandomUniformLike", {Formula::Elementwise, 6}},
        {"Bernoulli", {Formula::Elementwise, 8}}, {"Multinomial", {Formula::InputSized, 8}},
        {"DFT", {Formula::InputSized, 20}},
        {"If", {Formula::If}}, {"Loop", {Formula::Loop}}, {"Scan", {Formula::Loop}},
    };
    return table;
}

std::optional<int64_t> numelOf(const Graph& g, ValueId v)
{
    if (v == kNone)
        return std::nullopt;
    const auto& t = g.value(v).type;
    return t.shape ? t.shape->numel() : std::nullopt;
}

std::optional<std::vector<int64_t>> sizesOf(const Graph& g, ValueId v)
{
    if (v == kNone)
        return std::nullopt;
    const auto& t = g.value(v).type;
    return t.shape ? t.shape->sizes() : std::nullopt;
}

double product(const std::vector<int64_t>& dims, size_t from)
{
    double p = 1;
    for (size_t i = from; i < dims.size(); ++i)
        p *= static_cast<double>(dims[i]);
    return p;
}

NodeCost unknown(NodeCost c, const std::string& why)
{
    c.known = false;
    c.unknownReason = why;
    return c;
}

NodeCost subgraphCost(const Graph& g, bool& known)
{
    NodeCost total;
    for (size_t i = 0; i < g.nodeCount(); ++i) {
        const NodeCost c = estimateNodeCost(g, static_cast<NodeId>(i));
        known = known && c.known;
        total.flops += c.flops;
        total.bytesRead += c.bytesRead;
        total.bytesWritten += c.bytesWritten;
    }
    return total;
}

// Bytes: every input read once, every output written once.
NodeCost withBytes(const Graph& g, const Node& n, NodeCost c)
{
    for (ValueId v : n.inputs) {
        if (v == kNone)
            continue;
        const auto b = g.value(v).type.byteSize();
        if (!b)
            return unknown(c, "shape of input '" + g.value(v).name + "' is unknown");
        c.bytesRead += static_cast<double>(*b);
    }
    for (ValueId v : n.outputs) {
        if (v == kNone)
            continue;
        const auto b = g.value(v).type.byteSize();
        if (!b)
            return unknown(c, "shape of output '" + g.value(v).name + "' is unknown");
        c.bytesWritten += static_cast<double>(*b);
    }
    return c;
}

// What the formulas below read. Each completes a cost whose bytes are counted
// (withBytes), or returns it unknown.
struct CostInput {
    const Graph& g;
    const Node& n;
    OpRule rule;
    std::optional<int64_t> outNumel;  // of the first output
    bool fusedConv;                   // Ramiel's FusedConv, costed as its Conv
};

NodeCost selectCost(const CostInput& in, NodeCost c)
{
    // Reads about what it writes, plus its index inputs.
    const Graph& g = in.g;
    const Node& n = in.n;
    double indexBytes = 0;
    for (size_t i = 1; i < n.inputs.size(); ++i)
        if (auto b = n.inputs[i] != kNone ? g.value(n.inputs[i]).type.byteSize() : std::nullopt)
            indexBytes += static_cast<double>(*b);
    c.bytesRead = c.bytesWritten + indexBytes;
    return c;
}

NodeCost variadicCost(const CostInput& in, NodeCost c)
{
    double nin = 0;
    for (ValueId v : in.n.inputs)
        nin += v != kNone;
    c.flops = std::max(0.0, nin - 1) * static_cast<double>(in.outNumel.value_or(0));
    return c;
}

NodeCost convCost(const CostInput& in, NodeCost c)
{
    // W: [Cout, Cin/group, k...]; each output element is a dot product over W[1:].
    const Node& n = in.n;
    const size_t wIndex = n.opType == "QLinearConv" ? 3 : 1;
    const auto w = sizesOf(in.g, n.input(wIndex));
    if (!w || w->size() < 2 || !in.outNumel)
        return unknown(c, "convolution weight or output shape is unknown");
    c.flops = 2.0 * static_cast<double>(*in.outNumel) * product(*w, 1);
    if (n.input(2) != kNone && (n.opType == "Conv" || in.fusedConv))
        c.flops += static_cast<double>(*in.outNumel);
    return c;
}

NodeCost convTransposeCost(const CostInput& in, NodeCost c)
{
    // W: [Cin, Cout/group, k...]; each input element is scattered over W[1:].
    const auto w = sizesOf(in.g, in.n.input(1));
    const auto inNumel = numelOf(in.g, in.n.input(0));
    if (!w || w->size() < 2 || !inNumel || !in.outNumel)
        return unknown(c, "transposed-convolution weight or input shape is unknown");
    c.flops = 2.0 * static_cast<double>(*inNumel) * product(*w, 1);
    if (in.n.input(2) != kNone)
        c.flops += static_cast<double>(*in.outNumel);
    return c;
}

NodeCost gemmCost(const CostInput& in, NodeCost c)
{
    const auto a = sizesOf(in.g, in.n.input(0));
    if (!a || a->size() != 2 || !in.outNumel)
        return unknown(c, "Gemm operand shape is unknown");
    const double k = static_cast<double>(in.n.attrInt("transA", 0) ? (*a)[0] : (*a)[1]);
    c.flops = 2.0 * static_cast<double>(*in.outNumel) * k;
    if (in.n.input(2) != kNone)
        c.flops += static_cast<double>(*in.outNumel);
    return c;
}

NodeCost matMulCost(const CostInput& in, NodeCost c)
{
    const auto a = sizesOf(in.g, in.n.input(0));
    if (!a || a->empty() || !in.outNumel)
        return unknown(c, "MatMul operand shape is unknown");
    c.flops = 2.0 * static_cast<double>(*in.outNumel) * static_cast<double>(a->back());
    return c;
}

NodeCost poolCost(const CostInput& in, NodeCost c)
{
    const auto kernel = in.n.attrInts("kernel_shape");
    if (!in.outNumel)
        return unknown(c, "pooling output shape is unknown");
    c.flops = static_cast<double>(*in.outNumel) * product(kernel, 0);
    return c;
}

NodeCost inputSizedCost(const CostInput& in, NodeCost c)
{
    const auto inNumel = numelOf(in.g, in.n.input(0));
    if (!inNumel)
        return unknown(c, "input shape is unknown");
    c.flops = in.rule.k * static_cast<double>(*inNumel);
    return c;
}

NodeCost recurrentCost(const CostInput& in, NodeCost c)
{
    // X: [seq, batch, I], W: [dirs, gates*H, I], R: [dirs, gates*H, H].
    const auto x = sizesOf(in.g, in.n.input(0));
    const auto w = sizesOf(in.g, in.n.input(1));
    const auto r = sizesOf(in.g, in.n.input(2));
    if (!x || !w || !r || x->size() != 3 || w->size() != 3 || r->size() != 3)
        return unknown(c, "recurrent input or weight shape is unknown");
    const double steps = static_cast<double>((*x)[0] * (*x)[1] * (*w)[0]);
    c.flops = steps * (2.0 * static_cast<double>((*w)[1]) * static_cast<double>((*w)[2] + (*r)[2]) +
                       8.0 * static_cast<double>((*w)[1]));
    return c;
}

NodeCost ifCost(const CostInput&, NodeCost c)
{
    // Which branch runs is decided by the data: measured costs fill it in.
    return unknown(c, "the branch is chosen at run time");
}

// Loop's constant M, or the scan axis of Scan's first scan input.
std::optional<int64_t> tripCount(const Graph& g, const Node& n)
{
    std::optional<int64_t> trips;
    if (n.opType == "Loop") {
        const ValueId m = n.input(0);
        if (m != kNone && g.value(m).isConstant())
            if (auto vals = g.value(m).initializer->toInt64s(); vals && vals->size() == 1)
                trips = (*vals)[0];
    } else if (const Attribute* scans = n.attr("num_scan_inputs"); scans && scans->i > 0) {
        // The scan inputs come last. Scan-8 is batch-major (scan axis 1); later
        // versions scan axis 0 unless scan_input_axes says otherwise.
        const size_t first = n.inputs.size() >= static_cast<size_t>(scans->i) ? n.inputs.size() - scans->i : 0;
        const auto axes = n.attrInts("scan_input_axes");
        if (const auto dims = sizesOf(g, n.input(first))) {
            int64_t axis = n.opset > 0 && n.opset < 9 ? 1 : axes.empty() ? 0 : axes[0];
            if (axis < 0)
                axis += static_cast<int64_t>(dims->size());
            if (axis >= 0 && axis < static_cast<int64_t>(dims->size()))
                trips = (*dims)[static_cast<size_t>(axis)];
        }
    }
    return trips;
}

NodeCost loopCost(const CostInput& in, NodeCost c)
{
    // Body cost times the trip count.
    const Node& n = in.n;
    const Attribute* body = n.attr("body");
    const std::optional<int64_t> trips = tripCount(in.g, n);
    if (n.opType == "Loop" && n.input(1) != kNone)
        return unknown(c, "the condition may end the loop at run time");
    if (!body || !body->g || !trips || *trips < 0)
        return unknown(c, n.opType == "Loop" ? "the trip count is not a constant"
                                             : "the number of scan iterations is not known");
    bool known = true;
    const NodeCost b = subgraphCost(*body->g, known);
    if (!known)
        return unknown(c, "the loop body has nodes of unknown cost");
    c.flops = b.flops * static_cast<double>(*trips);
    c.bytesRead += b.bytesRead * static_cast<double>(*trips);
    c.bytesWritten += b.bytesWritten * static_cast<double>(*trips);
    return c;
}

NodeCost byFormula(const CostInput& in, NodeCost c)
{
    switch (in.rule.formula) {
    case Formula::View:
    case Formula::Copy:
        return c;
    case Formula::Select:
        return selectCost(in, c);
    case Formula::Elementwise:
        c.flops = in.rule.k * static_cast<double>(in.outNumel.value_or(0));
        return c;
    case Formula::Variadic:
        return variadicCost(in, c);
    case Formula::Conv:
        return convCost(in, c);
    case Formula::ConvTranspose:
        return convTransposeCost(in, c);
    case Formula::Gemm:
        return gemmCost(in, c);
    case Formula::MatMul:
        return matMulCost(in, c);
    case Formula::Pool:
        return poolCost(in, c);
    case Formula::InputSized:
        return inputSizedCost(in, c);
    case Formula::Recurrent:
        return recurrentCost(in, c);
    case Formula::If:
        return ifCost(in, c);
    case Formula::Loop:
        return loopCost(in, c);
    }
    return c;
}

}  // namespace

NodeCost estimateNodeCost(const Graph& g, NodeId id)
{
    const Node& n = g.node(id);
    NodeCost c;
    // Ramiel's operators (core/ir/fused_ops.h) cost what the ONNX operator they run as
    // does: FusedConv its Conv, MatMulAdd its MatMul (the bias and GELU are added in the
    // product's kernel), Gelu, HardSwish and LayerNormalization theirs, Silu a Sigmoid's
    // pass, ChannelShuffle a copy, FusedBatchNorm its BatchNormalization (the Concat and the
    // activation ride along in its pass), FusedGroupNorm a GroupNormalization (its activation too).
    static const std::map<std::string, std::string> ramielAs{
        {kFusedConv, "Conv"}, {kMatMulAdd, "MatMul"}, {kGelu, "Gelu"},         {kHardSwish, "HardSwish"},
        {kSilu, "Sigmoid"},   {kChannelShuffle, "Concat"}, {kLayerNorm, "LayerNormalization"},
        {kFusedBatchNorm, "BatchNormalization"}, {kFusedGroupNorm, "GroupNormalization"}};
    const bool fusedConv = n.domain == kRamielDomain && n.opType == kFusedConv;
    const auto as = n.domain == kRamielDomain ? ramielAs.find(n.opType) : ramielAs.end();
    const auto it = n.domain.empty() ? rules().find(n.opType) : as != ramielAs.end() ? rules().find(as->second) : rules().end();
    const OpRule rule = it != rules().end() ? it->second : OpRule{Formula::Copy, 0};
    c.estimated = it == rules().end();

    if (rule.formula == Formula::View)
        return c;
    c = withBytes(g, n, c);
    if (!c.known)
        return c;
    const ValueId out = n.outputs.empty() ? kNone : n.outputs[0];
    return byFormula({g, n, rule, numelOf(g, out), fusedConv}, c);
}

std::vector<NodeCost> estimateCosts(const Graph& graph)
{
    std::vector<NodeCost> out;
    out.reserve(graph.nodeCount());
    for (size_t i = 0; i < graph.nodeCount(); ++i)
        out.push_back(estimateNodeCost(graph, static_cast<NodeId>(i)));
    return out;
}

double costSeconds(const NodeCost& cost, const MachineConstants& m)
{
    if (!cost.known)
        return std::numeric_limits<double>::quiet_NaN();
    return m.overheadSeconds + std::max(cost.flops / m.flopsPerSecond, cost.bytes() / m.bytesPerSecond);
}

std::vector<double> costSeconds(const std::vector<NodeCost>& costs, const MachineConstants& machine)
{
    std::vector<double> out;
    out.reserve(costs.size());
    for (const NodeCost& c : costs)
        out.push_back(costSeconds(c, machine));
    return out;
}

}  // namespace ramiel
