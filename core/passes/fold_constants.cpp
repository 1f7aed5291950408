// Constant propagation and folding: every node whose inputs are all constant
// is evaluated once and its outputs become initializers. Constant nodes and
// shape arithmetic (Shape of a statically known shape, Gather from it) fold
// here directly; the rest runs on the runtime's own kernels (one compiled
// sub-model holding every foldable node), so folding computes exactly what
// execution would.
//
// Sizes first: when the graph inputs' sizes are known but shape inference left
// values after shape arithmetic unsized (ONNX's data propagation stops at Div,
// Mod, ScatterND...), a probe runs, on zero inputs, the nodes whose output sizes
// follow from sizes alone and that those values depend on, and records each
// output's size. Under a dynamic batch it runs again at twice the batch: a size
// that changes is the batch's and is never folded, and a Reshape or Expand target
// that differs only by the batch becomes a constant with -1 (Reshape) or 1
// (Expand) in its place.
#include "core/ir/output_sizes.h"
#include "core/ir/topology.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/resources.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>

namespace ramiel::passes {

namespace {

constexpr int64_t kMaxFoldedBytes = int64_t(16) << 20;

std::shared_ptr<Tensor> int64Tensor(const std::vector<int64_t>& values, std::vector<int64_t> dims)
{
    return tensorFrom(DataType::Int64, values, std::move(dims));
}

// The value of a Constant node, when its attribute is a numeric one.
std::shared_ptr<const Tensor> constantValue(const Node& n)
{
    for (const Attribute& a : n.attributes) {
        if (a.name == "value" && a.kind == Attribute::Kind::Tensor && a.t && a.t->hasData() &&
            a.t->dtype != DataType::String)
            return a.t;
        if (a.name == "value_float" && a.kind == Attribute::Kind::Float)
            return tensorFrom(DataType::Float, std::vector<float>{a.f}, {});
        if (a.name == "value_floats" && a.kind == Attribute::Kind::Floats)
            return tensorFrom(DataType::Float, a.floats, {int64_t(a.floats.size())});
        if (a.name == "value_int" && a.kind == Attribute::Kind::Int)
            return int64Tensor({a.i}, {});
        if (a.name == "value_ints" && a.kind == Attribute::Kind::Ints)
            return int64Tensor(a.ints, {int64_t(a.ints.size())});
    }
    return nullptr;
}

// Shape's [start, end) over a rank-r input (opset 15 added them).
std::pair<int64_t, int64_t> shapeRange(const Node& n, int64_t rank)
{
    auto clampAxis = [rank](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
    const int64_t start = clampAxis(n.attrInt("start", 0));
    const Attribute* endAttr = n.attr("end");
    const int64_t end = endAttr ? clampAxis(endAttr->i) : rank;
    return {start, std::max(start, end)};
}

// Operators whose outputs may be random draws: folding would fix one draw for
// every run (Dropout in training mode; eliminate-identity removes it where
// inference mode is certain).
bool drawsRandomly(const Node& n)
{
    static const std::set<std::string> ops = {"Dropout", "Bernoulli", "Multinomial", "RandomNormal",
                                              "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
    return ops.count(n.opType) > 0;
}

// What is known of a value before anything runs.
enum class Known { Nothing, Sizes, Value };

// Operators whose output sizes follow from their inputs' sizes (and attributes) alone.
bool sizesFromSizes(const std::string& op)
{
    static const std::set<std::string> ops = {
        "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
        "BatchNormalization", "BitShift", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Concat", "Conv", "ConvTranspose",
        "Cos", "Cosh", "CumSum", "DepthToSpace", "DequantizeLinear", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf",
        "Exp", "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool",
        "GlobalMaxPool", "Greater", "GreaterOrEqual", "GridSample", "HardSigmoid", "HardSwish", "Hardmax", "Identity",
        "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual",
        "Log", "LogSoftmax", "LpNormalization", "MatMul", "Max", "MaxPool", "Mean", "MeanVarianceNormalization", "Min",
        "Mish", "Mod", "Mul", "Neg", "Not", "Or", "PRelu", "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear",
        "Reciprocal", "Relu", "RoiAlign", "Round", "Scatter", "ScatterElements", "ScatterND", "Selu", "Shrink", "Sigmoid", "Sign",
        "Sin", "Sinh", "Softmax", "Softplus", "Softsign", "SpaceToDepth", "Sqrt", "Sub", "Sum", "Tan", "Tanh",
        "ThresholdedRelu", "Transpose", "Trilu", "Where", "Xor"};
    return ops.count(op) > 0;
}

// What the probe learnt, by value id of the graph it ran on.
struct Probe {
    bool ran = false;
    bool batchKnown = false;  // the second run, at twice the batch, succeeded
    std::vector<std::optional<RunProfile::ValueType>> types;
    std::vector<std::vector<bool>> batchDims;  // per value, which dimensions scale with the batch
    std::vector<std::vector<int64_t>> twiceDims;  // per value, its sizes at twice the batch
    std::map<ValueId, std::pair<std::vector<int64_t>, std::vector<int64_t>>> targets;  // at the batch and twice it
    int sized = 0;  // values whose sizes it supplied
    size_t nodesRun = 0;    // nodes in the larger of its two runs
    size_t graphNodes = 0;  // nodes in the graph it probed
    std::string batchProblem;  // why the run at twice the batch failed
    bool batchFixed = false;   // a node failed there: the model runs at its own batch only

    // Does any of dimensions [from, to) of v change with the batch? Unknown: as `fallback`.
    bool batchIn(ValueId v, int64_t from, int64_t to, bool fallback) const
    {
        if (!batchKnown || v == kNone || size_t(v) >= batchDims.size() || batchDims[size_t(v)].empty())
            return fallback;
        const auto& d = batchDims[size_t(v)];
        for (int64_t i = std::max<int64_t>(from, 0); i < to && size_t(i) < d.size(); ++i)
            if (d[size_t(i)])
                return true;
        return false;
    }
};

std::vector<Tensor> zeroInputs(const Graph& g, const std::vector<ValueId>& inputs, int64_t batch)
{
    std::vector<Tensor> out;
    for (ValueId v : inputs) {
        Tensor t;
        t.dtype = g.value(v).type.dtype;
        t.dims = *g.value(v).type.shape->sizes();
        if (!t.dims.empty())
            t.dims[0] *= batch;
        t.data.assign(size_t(t.numel() * elementSize(t.dtype)), '\0');
        out.push_back(std::move(t));
    }
    return out;
}

// A probe's sub-model: of the candidate nodes, those that what it must learn depends on.
struct ProbeModel {
    Model sub;
    std::vector<ValueId> back;     // the graph's value for each of sub's
    std::vector<ValueId> inputs;   // fed as zeros: graph inputs, and values cut off
    std::vector<ValueId> targets;  // Reshape's and Expand's computed targets: sub's outputs
    size_t nodeCount = 0;
};

// A value whose contents no node needs (only its sizes) and that inference sized fully can
// be fed as zeros of that size, so that what produced it need not run: a segmentation
// model's backbone, ahead of the shape arithmetic on its features. `Pruned` runs only the
// nodes the unsized values and the computed Reshape/Expand targets depend on; `Whole` runs
// every candidate node but those whose outputs are all fed (at twice the batch, a node that
// fails tells that the model fixes its batch).
enum class ProbeNodes { Pruned, Whole };

ProbeModel probeModel(const Model& model, const std::vector<NodeId>& nodes, const std::vector<Known>& known,
                      ProbeNodes which, const std::function<bool(ValueId)>& feedable)
{
    const Graph& g = model.graph;
    auto sized = [&](ValueId v) {
        const Value& val = g.value(v);
        return val.type.shape && val.type.shape->isFullyKnown() && elementSize(val.type.dtype) > 0;
    };
    auto computed = [&](ValueId v) { return v != kNone && !g.value(v).isConstant() && g.value(v).producer != kNone; };
    auto fed = [&](ValueId v) { return known[size_t(v)] == Known::Sizes && sized(v) && feedable(v); };
    std::vector<bool> wanted(g.valueCount(), false), runs(g.nodeCount(), false);
    auto sizesNeeded = [&](ValueId v) {
        if (computed(v) && !fed(v))
            wanted[size_t(v)] = true;
    };
    ProbeModel p;
    for (NodeId id : nodes) {
        const Node& n = g.node(id);
        for (ValueId v : n.outputs)
            if (v != kNone && (which == ProbeNodes::Whole ? !fed(v) : !sized(v)))
                wanted[size_t(v)] = true;
        if (n.opType == "Shape" || n.opType == "Size")
            sizesNeeded(n.input(0));  // which of its dimensions are the batch decides what folds
        const ValueId t = n.input(1);
        if ((n.opType == "Reshape" || n.opType == "Expand") && computed(t) && known[size_t(t)] == Known::Value) {
            wanted[size_t(t)] = true;
            sizesNeeded(n.input(0));
            if (std::find(p.targets.begin(), p.targets.end(), t) == p.targets.end())
                p.targets.push_back(t);
        }
    }
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        const Node& n = g.node(*it);
        runs[size_t(*it)] =
            std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return v != kNone && wanted[size_t(v)]; });
        if (!runs[size_t(*it)])
            continue;
        for (ValueId v : n.inputs)
            if (computed(v) && known[size_t(v)] == Known::Value)
                wanted[size_t(v)] = true;
            else
                sizesNeeded(v);
    }

    p.sub.path = model.path;
    p.sub.irVersion = model.irVersion;
    p.sub.opsets = model.opsets;
    std::vector<ValueId> map(g.valueCount(), kNone);
    auto bring = [&](ValueId v) -> ValueId {
        if (v == kNone)
            return kNone;
        if (map[size_t(v)] == kNone) {
            const Value& val = g.value(v);
            map[size_t(v)] = p.sub.graph.addValue(val.name, val.type);
            p.back.push_back(v);
            if (val.isConstant()) {
                p.sub.graph.setInitializer(map[size_t(v)], val.initializer);
            } else if (val.producer == kNone || !runs[size_t(val.producer)]) {
                p.sub.graph.addInput(map[size_t(v)]);
                p.inputs.push_back(v);
            }
        }
        return map[size_t(v)];
    };
    for (NodeId id : nodes) {
        if (!runs[size_t(id)])
            continue;
        Node copy = g.node(id);
        copy.id = kNone;
        for (ValueId& v : copy.inputs)
            v = bring(v);
        for (ValueId& v : copy.outputs)
            v = bring(v);
        p.sub.graph.addNode(std::move(copy));
        ++p.nodeCount;
    }
    for (ValueId t : p.targets)
        p.sub.graph.addOutput(map[size_t(t)]);
    return p;
}

// Values whose first dimension is the batch, as the graph inputs' (the probe doubles that
// one): what operators that work sample by sample make of such values and constants.
std::vector<bool> batchLeading(const Graph& g, const std::vector<NodeId>& nodes)
{
    // The first input's first dimension stays the output's; the other inputs are weights.
    static const std::set<std::string> perSample = {
        "Abs", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Celu", "Clip", "Conv", "ConvTranspose", "Cos",
        "CumSum", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
        "HardSigmoid", "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "LRN", "LayerNormalization",
        "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "LpPool", "MaxPool", "MeanVarianceNormalization", "Mish",
        "Neg", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Softmax", "Softplus",
        "Softsign", "Sqrt", "Tanh", "ThresholdedRelu"};
    static const std::set<std::string> broadcasting = {"Add", "And", "Div", "Equal", "Greater", "GreaterOrEqual",
                                                       "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul",
                                                       "Or", "PRelu", "Pow", "Sub", "Sum", "Where", "Xor"};
    std::vector<bool> leading(g.valueCount(), false);
    for (ValueId v : g.inputs())
        leading[size_t(v)] = !g.value(v).isConstant();
    auto dims = [&](ValueId v) { return g.value(v).type.shape ? g.value(v).type.shape->sizes() : std::nullopt; };
    for (NodeId id : nodes) {
        const Node& n = g.node(id);
        if (n.outputs.empty() || n.outputs[0] == kNone || n.inputs.empty() || n.input(0) == kNone)
            continue;
        const auto out = dims(n.outputs[0]);
        if (!out || out->empty())
            continue;
        const size_t rank = out->size();
        auto leads = [&](ValueId v) { return leading[size_t(v)] && dims(v) && dims(v)->size() == rank; };
        bool ok = false;
        if (perSample.count(n.opType)) {
            ok = leads(n.input(0));
            for (size_t i = 1; i < n.inputs.size(); ++i)
                ok = ok && (n.input(i) == kNone || g.value(n.input(i)).isConstant());
        } else if (broadcasting.count(n.opType)) {
            for (ValueId v : n.inputs) {
                if (v == kNone)
                    continue;
                const auto d = dims(v);
                if (leads(v))
                    ok = true;
                else if (!g.value(v).isConstant() || !d || (d->size() == rank && d->front() != 1) || d->size() > rank) {
                    ok = false;
                    break;
                }
            }
        } else if (n.opType == "Concat") {
            const int64_t axis = n.attrInt("axis", 0);
            ok = (axis < 0 ? axis + int64_t(rank) : axis) >= 1 &&
                 std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return v != kNone && leads(v); });
        }
        leading[size_t(n.outputs[0])] = ok;
    }
    return leading;
}

// Runs, on zero inputs, every node whose output sizes follow from the graph
// inputs' sizes and the constants, and records the sizes (and the contents of
// Reshape's and Expand's targets). Writes the sizes into values that had none.
Probe probeSizes(Model& model, const PassContext& context, const std::set<std::string>& supported)
{
    Graph& g = model.graph;
    Probe probe;
    std::vector<Known> known(g.valueCount(), Known::Nothing);
    for (const Value& v : g.values()) {
        if (v.isConstant())
            known[size_t(v.id)] = v.initializer->hasData() ? Known::Value : Known::Nothing;
        else if (v.isGraphInput && v.type.shape && v.type.shape->isFullyKnown() && elementSize(v.type.dtype) > 0)
            known[size_t(v.id)] = Known::Sizes;
    }
    auto at = [&](ValueId v, Known k) { return v == kNone || known[size_t(v)] >= k; };
    const Topology topo = buildTopology(g);
    std::vector<NodeId> nodes;
    bool needed = false;
    for (NodeId id : topo.order) {
        const Node& n = g.node(id);
        if (!n.domain.empty() || n.hasSubgraphs() || !n.implicitInputs.empty() || !supported.count(n.opType))
            continue;
        Known k = Known::Nothing;
        const bool allValues = std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return at(v, Known::Value); });
        const bool allSizes = std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) { return at(v, Known::Sizes); });
        if ((n.opType == "Shape" || n.opType == "Size") && at(n.input(0), Known::Sizes)) {
            k = Known::Value;
            needed = needed || (context.batchDynamic && !g.value(n.input(0)).isConstant());
        } else if (allValues) {
            k = Known::Value;
        } else if (allSizes && sizesFromSizes(n.opType)) {
            k = Known::Sizes;
        } else if (const auto* deciding = sizeDecidingInputs(n); deciding && allSizes) {
            k = Known::Sizes;
            for (size_t i : *deciding)
                if (!at(n.input(i), Known::Value))
                    k = Known::Nothing;
        }
        if (k == Known::Nothing)
            continue;
        nodes.push_back(id);
        for (ValueId v : n.outputs)
            if (v != kNone) {
                known[size_t(v)] = k;
                needed = needed || !g.value(v).type.shape || !g.value(v).type.shape->isFullyKnown();
            }
    }
    if (!needed || nodes.empty())
        return probe;

    // The first run may take every value inference sized fully as zeros of its size; the run
    // at twice the batch only those whose batch is their first dimension, as the inputs'.
    ProbeModel once = probeModel(model, nodes, known, ProbeNodes::Pruned, [](ValueId) { return true; });
    std::vector<bool> leading;
    if (context.batchDynamic)
        leading = batchLeading(g, nodes);
    auto runAt = [&](const ProbeModel& pm, int64_t batch, RunProfile& profile) {
        auto compiled = runtime().compile(pm.sub);  // refuses any one value larger than memory
        uint64_t bytes = 0;  // all the zeros fed, held twice while the runtime takes them
        for (ValueId v : pm.inputs)
            bytes += 2 * byteCount(*g.value(v).type.shape->numel() * batch, int64_t(elementSize(g.value(v).type.dtype)));
        requireMemory(model.path, "the probe's inputs", bytes);
        compiled->setInputs(zeroInputs(g, pm.inputs, batch));
        profile.recordTypes = true;
        compiled->serialExecutor(1)->run(&profile);
        return compiled->outputs();
    };
    RunProfile first;
    std::vector<Tensor> firstOut;
    try {
        if (once.nodeCount > 0)  // none: inference sized everything, only the batch's place is asked
            firstOut = runAt(once, 1, first);
    } catch (const std::exception&) {
        return probe;  // sizes stay as shape inference left them
    }
    probe.ran = true;
    probe.nodesRun = once.nodeCount;
    probe.graphNodes = topo.order.size();
    probe.types.assign(g.valueCount(), std::nullopt);
    for (ValueId s = 0; s < ValueId(once.back.size()); ++s)
        if (size_t(s) < first.valueTypes.size() && first.valueTypes[size_t(s)])
            probe.types[size_t(once.back[size_t(s)])] = first.valueTypes[size_t(s)];
    for (ValueId v : once.inputs)  // the values the probe fed
        probe.types[size_t(v)] = RunProfile::ValueType{g.value(v).type.dtype, *g.value(v).type.shape->sizes()};
    if (context.batchDynamic) {
        try {
            // Values the first run fed or left out have the sizes inference gave them.
            auto atBatch = [&](ValueId v) -> std::optional<std::vector<int64_t>> {
                if (probe.types[size_t(v)])
                    return probe.types[size_t(v)]->dims;
                const auto& shape = g.value(v).type.shape;
                return shape ? shape->sizes() : std::nullopt;
            };
            const ProbeModel twice =
                probeModel(model, nodes, known, ProbeNodes::Whole, [&](ValueId v) { return leading[size_t(v)]; });
            RunProfile second;
            const std::vector<Tensor> secondOut = runAt(twice, 2, second);
            probe.nodesRun = std::max(probe.nodesRun, twice.nodeCount);
            probe.batchDims.assign(g.valueCount(), {});
            probe.twiceDims.assign(g.valueCount(), {});
            for (ValueId s = 0; s < ValueId(twice.back.size()); ++s) {
                const ValueId v = twice.back[size_t(s)];
                const auto a = atBatch(v);
                if (size_t(s) >= second.valueTypes.size() || !second.valueTypes[size_t(s)] || !a)
                    continue;
                const auto& b = second.valueTypes[size_t(s)]->dims;
                std::vector<bool> d(a->size(), true);
                for (size_t i = 0; i < a->size() && a->size() == b.size(); ++i)
                    d[i] = (*a)[i] != b[i];
                probe.batchDims[size_t(v)] = d;
                probe.twiceDims[size_t(v)] = b;
            }
            for (ValueId v : twice.inputs) {  // the batch is their first dimension
                std::vector<int64_t> dims = *g.value(v).type.shape->sizes(), doubled = dims;
                std::vector<bool> d(dims.size(), false);
                if (!dims.empty()) {
                    doubled[0] *= 2;
                    d[0] = doubled[0] != dims[0];
                }
                probe.batchDims[size_t(v)] = d;
                probe.twiceDims[size_t(v)] = doubled;
            }
            for (size_t i = 0; i < once.targets.size() && i < twice.targets.size(); ++i) {
                const auto a = firstOut[i].toInt64s(), b = secondOut[i].toInt64s();
                if (a && b && once.targets[i] == twice.targets[i])
                    probe.targets[once.targets[i]] = {*a, *b};
            }
            probe.batchKnown = true;
        } catch (const Error& e) {
            // A node that fails at twice the batch: the model's own computation fixes the
            // batch (a Reshape to a constant [1, ...]), so folding it in loses nothing.
            probe.batchProblem = e.message();
            probe.batchFixed = e.kind() == ErrorKind::Runtime;
        } catch (const std::exception& e) {
            probe.batchProblem = e.what();
        }
    }
    // Sizes the probe found where inference left none (never replacing a known one).
    for (ValueId v = 0; v < ValueId(g.valueCount()); ++v) {
        Value& val = g.value(v);
        const auto& t = probe.types[size_t(v)];
        if (!t || known[size_t(v)] == Known::Nothing || val.isConstant())
            continue;
        if (!val.type.shape || !val.type.shape->isFullyKnown()) {
            val.type.shape = Shape::of(t->dims);
            ++probe.sized;
        }
        if (val.type.dtype == DataType::Undefined)
            val.type.dtype = t->dtype;
    }
    return probe;
}

// Reshape's or Expand's target that differs between the batch and twice it only
// where the batch scales: the same target as a constant, with -1 (Reshape) or 1
// (Expand: the input already has that size there) in that place. Null otherwise.
std::shared_ptr<Tensor> batchFreeTarget(const Node& n, const Probe& probe)
{
    const auto it = probe.targets.find(n.input(1));
    if (it == probe.targets.end())
        return nullptr;
    std::vector<int64_t> t = it->second.first;
    const std::vector<int64_t>& twice = it->second.second;
    if (t.size() != twice.size())
        return nullptr;
    const ValueId x = n.input(0);
    if (!probe.types[size_t(x)] || probe.batchDims[size_t(x)].empty())
        return nullptr;
    const auto& xDims = probe.types[size_t(x)]->dims;
    const auto& xBatch = probe.batchDims[size_t(x)];
    const auto& xTwice = probe.twiceDims[size_t(x)];
    if (xTwice.size() != xDims.size())
        return nullptr;
    if (n.opType == "Reshape") {
        // -1 (once) takes what is left; 0 copies the input's size where it has the batch's there
        // (the code generators take -1 only).
        if (n.attrInt("allowzero", 0) != 0)
            return nullptr;
        bool minusOne = std::count(t.begin(), t.end(), -1) > 0, changed = false;
        for (size_t i = 0; i < t.size(); ++i) {
            if (t[i] == twice[i])
                continue;
            if (t[i] <= 0 || twice[i] != 2 * t[i])
                return nullptr;
            if (!minusOne)
                t[i] = -1, minusOne = true;
            else if (i < xDims.size() && xDims[i] == t[i] && xBatch[i] && xTwice[i] == twice[i])
                t[i] = 0;
            else
                return nullptr;
            changed = true;
        }
        if (!changed)
            return nullptr;
    } else {
        const int64_t offset = int64_t(t.size()) - int64_t(xDims.size());
        bool changed = false;
        for (size_t i = 0; i < t.size(); ++i) {
            if (t[i] == twice[i])
                continue;
            const int64_t j = int64_t(i) - offset;
            // The input has this size here, and it scales with the batch as the target does.
            if (j < 0 || xDims[size_t(j)] != t[i] || !xBatch[size_t(j)] || xTwice[size_t(j)] != twice[i])
                return nullptr;
            t[i] = 1;
            changed = true;
        }
        if (!changed)
            return nullptr;
    }
    return tensorFrom(DataType::Int64, t, {int64_t(t.size())});
}

class FoldConstantsPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext& context) override
    {
        Graph& g = model.graph;
        Probe probe;
        std::set<std::string> supported;
        bool supportedLoaded = false;
        if (context.useRuntime && worthProbing(g)) {
            const auto ops = runtime().supportedOperators();
            supported.insert(ops.begin(), ops.end());
            supportedLoaded = true;
            probe = probeSizes(model, context, supported);
        }
        PassContext ctx = context;
        if (probe.batchFixed)
            ctx.batchDynamic = false;
        const Topology topo = buildTopology(g);
        GraphEditor edit(g);
        PassStats stats;

        // Results known now, by value id (initializers and what folds natively).
        std::vector<std::shared_ptr<const Tensor>> known(g.valueCount());
        for (const Value& v : g.values())
            known[size_t(v.id)] = v.initializer;
        // Nodes left to the runtime, in topological order; their outputs count as constant.
        std::vector<bool> viaRuntime(g.nodeCount(), false);
        std::vector<bool> pending(g.valueCount(), false);
        std::vector<NodeId> runtimeNodes;
        int native = 0;

        auto isConstant = [&](ValueId v) { return v == kNone || known[size_t(v)] || pending[size_t(v)]; };
        auto producesOutput = [&](const Node& n) {
            for (ValueId v : n.outputs)
                if (v != kNone && (g.value(v).isGraphOutput || edit.readBySubgraph(v)))
                    return true;
            return false;
        };

        for (NodeId id : topo.order) {
            const Node& n = g.node(id);
            if (!n.domain.empty() || n.hasSubgraphs() || !n.implicitInputs.empty() || n.outputs.empty() ||
                producesOutput(n))
                continue;
            // Native folds: Constant, and shape sizes known from shape inference.
            if (auto t = nativeFold(g, n, known, ctx, probe); t) {
                known[size_t(n.outputs[0])] = t;
                ++native;
                continue;
            }
            bool allConstant = true;
            for (ValueId v : n.inputs)
                allConstant = allConstant && isConstant(v);
            if (!allConstant || n.opType == "Constant" || n.opType == "Shape" || n.opType == "Size" || !context.useRuntime ||
                drawsRandomly(n))
                continue;
            if (!supportedLoaded) {
                const auto ops = runtime().supportedOperators();
                supported.insert(ops.begin(), ops.end());
                supportedLoaded = true;
            }
            if (!supported.count(n.opType))
                continue;
            viaRuntime[size_t(id)] = true;
            runtimeNodes.push_back(id);
            for (ValueId v : n.outputs)
                if (v != kNone)
                    pending[size_t(v)] = true;
        }

        std::string skipped;
        int tooLarge = 0;
        if (!runtimeNodes.empty()) {
            try {
                evaluate(model, runtimeNodes, viaRuntime, known);
                // A result much larger than what it is computed from stays a computation:
                // folding it would bloat the model (ConstantOfShape, Expand, Tile, Range).
                for (NodeId id : runtimeNodes) {
                    const Node& n = g.node(id);
                    int64_t in = 0, out = 0;
                    for (ValueId v : n.inputs)
                        if (v != kNone && known[size_t(v)])
                            in += int64_t(known[size_t(v)]->data.size());
                    for (ValueId v : n.outputs)
                        if (v != kNone && known[size_t(v)])
                            out += int64_t(known[size_t(v)]->data.size());
                    if (out > kMaxFoldedBytes && out > in) {
                        for (ValueId v : n.outputs)
                            if (v != kNone)
                                known[size_t(v)] = nullptr;
                        ++tooLarge;
                    }
                }
            } catch (const Error& e) {
                // Folding is an optimization: a node the runtime cannot evaluate stays a node.
                for (NodeId id : runtimeNodes)
                    for (ValueId v : g.node(id).outputs)
                        if (v != kNone)
                            known[size_t(v)] = nullptr;
                skipped = "; " + std::to_string(runtimeNodes.size()) +
                          " nodes left unfolded, the runtime could not evaluate them: " + e.message();
            }
        }

        // Replace every folded node: its outputs become initializers (those
        // still read), and the node goes.
        for (const Node& n : g.nodes()) {
            bool folded = n.outputs.size() > 0 && n.outputs[0] != kNone && known[size_t(n.outputs[0])] &&
                          !g.value(n.outputs[0]).isConstant();
            if (!folded)
                continue;
            const std::vector<ValueId> outs = n.outputs;
            edit.removeNode(n.id);
            ++stats.removed;
            for (ValueId v : outs) {
                if (v == kNone || !known[size_t(v)])
                    continue;
                g.setInitializer(v, known[size_t(v)]);
                g.value(v).type = known[size_t(v)]->type();
                edit.dropIfUnused(v);
            }
        }
        // Under a dynamic batch: targets computed from the batch become constants that leave it free.
        int freed = 0;
        if (probe.batchKnown)
            for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
                const Node& n = g.node(id);
                if (edit.removed(id) || (n.opType != "Reshape" && n.opType != "Expand") || !n.domain.empty() ||
                    n.input(1) == kNone || g.value(n.input(1)).isConstant())
                    continue;
                if (auto t = batchFreeTarget(n, probe)) {
                    const ValueId old = n.input(1);
                    edit.setInput(id, 1, edit.addConstant(g.value(old).name + "_batch_free", t));
                    edit.dropIfUnused(old);
                    ++freed;
                }
            }
        edit.commit();  // initializers only folded nodes read go with them
        stats.detail = "folded " + std::to_string(stats.removed) + " nodes (" + std::to_string(native) +
                       " without the runtime)" + skipped;
        if (probe.ran)
            stats.detail += "; a probe ran " + std::to_string(probe.nodesRun) + " of " + std::to_string(probe.graphNodes) +
                            " nodes" + (probe.sized ? " and found the sizes of " + std::to_string(probe.sized) + " values" : "");
        if (freed)
            stats.detail += "; " + std::to_string(freed) + " Reshape/Expand targets made batch-free constants";
        if (probe.sized) {
            // The import's count of values without sizes is stale now: recount.
            int unknown = 0;
            std::string example;
            for (const Value& v : g.values())
                if (!v.isConstant() && !v.isOuterScope && (!v.type.shape || !v.type.shape->isFullyKnown())) {
                    example = example.empty() ? v.name : example;
                    ++unknown;
                }
            auto& w = model.warnings;
            const std::string stale = "have no fully known shape after shape inference";
            w.erase(std::remove_if(w.begin(), w.end(), [&](const std::string& s) { return s.find(stale) != std::string::npos; }),
                    w.end());
            if (unknown)
                w.push_back(std::to_string(unknown) + " of " + std::to_string(g.valueCount()) +
                            " values have no fully known shape after shape inference and fold-constants' probe (e.g. '" +
                            example + "'); the costs of nodes that touch them are unknown");
        }
        if (probe.batchFixed)
            stats.detail += "; the batch folded in: the model itself runs only at its own batch (at twice it: " +
                            probe.batchProblem + ")";
        else if (!probe.batchProblem.empty())
            stats.detail += "; the probe at twice the batch failed (" + probe.batchProblem + ")";
        if (tooLarge)
            stats.detail += "; " + std::to_string(tooLarge) + " nodes left unfolded: their results exceed " +
                            std::to_string(kMaxFoldedBytes >> 20) + " MiB";
        return stats;
    }

private:
    // Folds Constant, Shape of a known shape and Gather from such a Shape
    // without running anything; null when the node is not one of those.
    // Anything to learn from a probe run: the inputs' sizes are known, and there are Shape
    // or Size nodes, or values without known sizes.
    static bool worthProbing(const Graph& g)
    {
        for (ValueId v : g.inputs())
            if (!g.value(v).isConstant() && (!g.value(v).type.shape || !g.value(v).type.shape->isFullyKnown()))
                return false;
        for (const Node& n : g.nodes())
            if (n.domain.empty() && (n.opType == "Shape" || n.opType == "Size"))
                return true;
        for (const Value& v : g.values())
            if (!v.isConstant() && (!v.type.shape || !v.type.shape->isFullyKnown()))
                return true;
        return false;
    }

    static std::shared_ptr<const Tensor> nativeFold(const Graph& g, const Node& n,
                                                    const std::vector<std::shared_ptr<const Tensor>>& known,
                                                    const PassContext& context, const Probe& probe)
    {
        if (n.opType == "Size" && n.input(0) != kNone) {
            const auto& shape = g.value(n.input(0)).type.shape;
            if (!shape || !shape->isFullyKnown())
                return nullptr;
            const int64_t rank = int64_t(shape->rank());
            if (context.batchDynamic && !g.value(n.input(0)).isConstant() && probe.batchIn(n.input(0), 0, rank, rank > 0))
                return nullptr;
            const auto count = shape->numel();
            return count ? int64Tensor({*count}, {}) : nullptr;
        }
        if (n.opType == "Constant" && n.inputs.empty())
            return constantValue(n);
        if (n.opType == "Shape" && n.input(0) != kNone) {
            const auto& shape = g.value(n.input(0)).type.shape;
            if (!shape || !shape->isFullyKnown())
                return nullptr;
            const auto sizes = *shape->sizes();
            const auto [start, end] = shapeRange(n, int64_t(sizes.size()));
            if (context.batchDynamic && !g.value(n.input(0)).isConstant() &&
                probe.batchIn(n.input(0), start, end, start == 0 && end > 0))
                return nullptr;  // would bake the batch size in
            std::vector<int64_t> part(sizes.begin() + start, sizes.begin() + end);
            return int64Tensor(part, {int64_t(part.size())});
        }
        if (n.opType == "Gather" && n.input(0) != kNone && n.input(1) != kNone && n.attrInt("axis", 0) == 0) {
            // Sizes picked out of a Shape whose input's sizes are known, the batch not among them.
            const ValueId data = n.input(0);
            const NodeId p = g.value(data).producer;
            const auto& indices = known[size_t(n.input(1))];
            if (p == kNone || g.node(p).opType != "Shape" || !indices || known[size_t(data)])
                return nullptr;
            const Node& shapeNode = g.node(p);
            const auto& shape = g.value(shapeNode.input(0)).type.shape;
            const auto idx = indices->toInt64s();
            if (!shape || !shape->isFullyKnown() || !idx)
                return nullptr;
            const auto sizes = *shape->sizes();
            const auto [start, end] = shapeRange(shapeNode, int64_t(sizes.size()));
            std::vector<int64_t> picked;
            for (int64_t i : *idx) {
                const int64_t count = end - start;
                if (i < -count || i >= count)
                    return nullptr;
                const int64_t axis = start + (i < 0 ? i + count : i);
                if (context.batchDynamic && !g.value(shapeNode.input(0)).isConstant() &&
                    probe.batchIn(shapeNode.input(0), axis, axis + 1, axis == 0))
                    return nullptr;
                picked.push_back(sizes[size_t(axis)]);
            }
            return int64Tensor(picked, indices->dims);
        }
        return nullptr;
    }

    // Runs the listed nodes on the runtime as one model whose outputs are
    // every value they produce, and stores the results in `known`.
    static void evaluate(const Model& model, const std::vector<NodeId>& nodes, const std::vector<bool>& selected,
                         std::vector<std::shared_ptr<const Tensor>>& known)
    {
        const Graph& g = model.graph;
        Model sub;
        sub.path = model.path;
        sub.irVersion = model.irVersion;
        sub.opsets = model.opsets;
        std::vector<ValueId> map(g.valueCount(), kNone);
        auto bring = [&](ValueId v) -> ValueId {
            if (v == kNone)
                return kNone;
            if (map[size_t(v)] == kNone) {
                map[size_t(v)] = sub.graph.addValue(g.value(v).name, g.value(v).type);
                if (known[size_t(v)] && g.value(v).producer == kNone)
                    sub.graph.setInitializer(map[size_t(v)], known[size_t(v)]);
                else if (known[size_t(v)] && !selected[size_t(g.value(v).producer)])
                    sub.graph.setInitializer(map[size_t(v)], known[size_t(v)]);  // folded natively
            }
            return map[size_t(v)];
        };
        std::vector<ValueId> produced;
        for (NodeId id : nodes) {
            Node copy = g.node(id);
            copy.id = kNone;
            for (ValueId& v : copy.inputs)
                v = bring(v);
            for (ValueId& v : copy.outputs) {
                if (v != kNone)
                    produced.push_back(v);
                v = bring(v);
            }
            sub.graph.addNode(std::move(copy));
        }
        for (ValueId v : produced)
            sub.graph.addOutput(map[size_t(v)]);
        auto compiled = runtime().compile(sub);
        compiled->setInputs({});
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> results = compiled->outputs();
        for (size_t i = 0; i < produced.size(); ++i)
            known[size_t(produced[i])] = std::make_shared<const Tensor>(results[i]);
    }
};

}  // namespace

std::unique_ptr<Pass> makeFoldConstantsPass() { return std::make_unique<FoldConstantsPass>(); }

}  // namespace ramiel::passes
