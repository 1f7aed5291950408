// Int8 quantization of Conv (also fused with Relu or a Clip from 0), Gemm and
// MatMul with constant weights, into ONNX's own QuantizeLinear,
// QLinearConv, QLinearMatMul and DequantizeLinear:
//   - weights: int8, symmetric, one scale per output channel;
//   - activations: uint8, asymmetric, ranges calibrated by running the float
//     model on sample inputs (PassContext, or seeded random ones);
//   - a value quantized once is reused by every quantized reader, MaxPool of
//     an int8 value stays int8 (it commutes with quantization), and the
//     DequantizeLinear after a quantized node goes when only quantized nodes
//     read it, so chains of convolutions and pools stay in int8.
// A fused Relu (or Clip from 0) is exact in this form: its output range starts
// at 0, so the zero point is 0 and uint8 saturation does the clamping.
// The pass measures what it did: the output error against the float model on
// the calibration inputs and the single-thread latency of both.
#include "core/ir/fused_ops.h"
#include "core/ir/topology.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace ramiel::passes {

namespace {

struct Range {
    double lo = 0, hi = 0;
};

struct QuantParams {
    float scale = 1;
    uint8_t zeroPoint = 0;
};

QuantParams activationParams(Range r)
{
    const double lo = std::min(r.lo, 0.0), hi = std::max(r.hi, 0.0);
    QuantParams q;
    q.scale = hi > lo ? float((hi - lo) / 255.0) : 1.0f;
    q.zeroPoint = uint8_t(std::clamp(std::round(-lo / double(q.scale)), 0.0, 255.0));
    return q;
}

std::vector<float> floatsOf(const Tensor& t)
{
    std::vector<float> v(size_t(t.numel()));
    std::memcpy(v.data(), t.data.data(), v.size() * sizeof(float));
    return v;
}

// Symmetric int8 per output channel; `channelAxis0` true for [M, ...] (Conv),
// false for [K, N] (MatMul's B, channels are columns).
void quantizeWeights(const std::vector<float>& w, int64_t channels, bool channelAxis0, std::vector<int8_t>& q,
                     std::vector<float>& scales)
{
    const size_t n = w.size();
    const size_t per = n / size_t(channels);
    auto channelOf = [&](size_t i) { return channelAxis0 ? i / per : i % size_t(channels); };
    std::vector<float> maxAbs(size_t(channels), 0.0f);
    for (size_t i = 0; i < n; ++i)
        maxAbs[channelOf(i)] = std::max(maxAbs[channelOf(i)], std::abs(w[i]));
    scales.resize(size_t(channels));
    for (size_t c = 0; c < size_t(channels); ++c)
        scales[c] = maxAbs[c] > 0 ? maxAbs[c] / 127.0f : 1.0f;
    q.resize(n);
    for (size_t i = 0; i < n; ++i)
        q[i] = int8_t(std::clamp(std::nearbyint(w[i] / scales[channelOf(i)]), -127.0f, 127.0f));
}

enum class Kind { Conv, Gemm, MatMul };

struct Candidate {
    NodeId node;
    Kind kind;
};

std::optional<Kind> candidateKind(const Graph& g, const Node& n)
{
    const ValueId x = n.input(0);
    if (x == kNone || n.outputs.size() != 1 || g.value(x).type.dtype != DataType::Float)
        return std::nullopt;
    const auto& shape = g.value(x).type.shape;
    if (n.domain.empty() && n.opType == "Conv") {
        if (shape && shape->rank() == 4 && floatConstant(g, n.input(1)) && (n.input(2) == kNone || floatConstant(g, n.input(2))))
            return Kind::Conv;
    } else if (n.domain == kRamielDomain && n.opType == kFusedConv) {
        // Relu and a Clip from 0 survive int8 exactly (see above); other activations stay float.
        const std::string act = n.attrString("activation", "");
        const Attribute* p = n.attr("activation_params");
        const bool exact = act == "Relu" || (act == "Clip" && p && p->floats.size() == 2 && p->floats[0] == 0.0f);
        if (exact && n.inputs.size() <= 3 && shape && shape->rank() == 4 && floatConstant(g, n.input(1)) &&
            (n.input(2) == kNone || floatConstant(g, n.input(2))))
            return Kind::Conv;
    } else if (n.domain.empty() && n.opType == "Gemm") {
        if (shape && shape->rank() == 2 && n.attrInt("transA", 0) == 0 && n.attrFloat("alpha", 1) == 1.0f &&
            n.attrFloat("beta", 1) == 1.0f && floatConstant(g, n.input(1)) &&
            g.value(n.input(1)).initializer->dims.size() == 2 &&
            (n.input(2) == kNone || floatConstant(g, n.input(2))))
            return Kind::Gemm;
    } else if (n.domain.empty() && n.opType == "MatMul") {
        if (shape && shape->rank() == 2 && floatConstant(g, n.input(1)) &&
            g.value(n.input(1)).initializer->dims.size() == 2)
            return Kind::MatMul;
    }
    return std::nullopt;
}

double medianRunSeconds(CompiledModel& compiled, int runs)
{
    auto exec = compiled.serialExecutor(1);
    exec->run();  // warm-up
    std::vector<double> t;
    for (int i = 0; i < runs; ++i)
        t.push_back(exec->run());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Largest |a - b| relative to the spread (max - min) of the float output b:
// a scale-free figure that a large constant offset in the output cannot hide.
double relativeError(const Tensor& a, const Tensor& b)
{
    const auto x = a.toDoubles(), y = b.toDoubles();
    if (!x || !y || x->size() != y->size() || y->empty())
        return INFINITY;
    double diff = 0;
    for (size_t i = 0; i < x->size(); ++i)
        diff = std::max(diff, std::abs((*x)[i] - (*y)[i]));
    const auto [lo, hi] = std::minmax_element(y->begin(), y->end());
    return diff / std::max(*hi - *lo, 1e-30);
}

std::string fmt(double v, int precision = 3)
{
    std::ostringstream os;
    os.precision(precision);
    os << v;
    return os.str();
}

// Conv, Gemm and MatMul nodes the pass can quantize, in topological order.
std::vector<Candidate> findCandidates(const Graph& g, const Topology& topo)
{
    std::vector<Candidate> candidates;
    for (NodeId id : topo.order)
        if (const auto kind = candidateKind(g, g.node(id)))
            candidates.push_back({id, *kind});
    return candidates;
}

// The calibration inputs, the ranges of the candidates' inputs and outputs on
// them, and the float model's outputs for them.
struct Calibration {
    std::vector<std::vector<Tensor>> samples;
    std::map<ValueId, Range> ranges;
    std::vector<std::vector<Tensor>> floatOutputs;
};

// Runs the float model with every candidate's input and output as extra outputs.
Calibration calibrate(const Model& model, const std::vector<Candidate>& candidates, const PassContext& context)
{
    const Graph& g = model.graph;
    Model probe = model;
    std::vector<ValueId> probed;
    std::map<ValueId, size_t> probeIndex;
    const size_t firstProbe = g.outputs().size();
    auto addProbe = [&](ValueId v) {
        if (probeIndex.count(v))
            return;
        probeIndex[v] = firstProbe + probed.size();
        probed.push_back(v);
        probe.graph.addOutput(v);
    };
    for (const Candidate& c : candidates) {
        addProbe(g.node(c.node).input(0));
        addProbe(g.node(c.node).outputs[0]);
    }
    auto compiledProbe = runtime().compile(probe);
    Calibration cal;
    cal.samples = context.calibrationInputs;
    if (cal.samples.empty())
        for (int i = 0; i < std::max(1, context.calibrationSamples); ++i)
            cal.samples.push_back(compiledProbe->randomInputs(1, context.seed + uint64_t(i)));
    for (const auto& inputs : cal.samples) {
        compiledProbe->setInputs(inputs);
        compiledProbe->serialExecutor(1)->run();
        const std::vector<Tensor> outs = compiledProbe->outputs();
        cal.floatOutputs.emplace_back(outs.begin(), outs.begin() + long(firstProbe));
        for (const auto& [v, index] : probeIndex) {
            const auto values = outs[index].toDoubles();
            if (!values || values->empty())
                continue;
            const auto [lo, hi] = std::minmax_element(values->begin(), values->end());
            auto it = cal.ranges.find(v);
            if (it == cal.ranges.end())
                cal.ranges[v] = {*lo, *hi};
            else
                it->second = {std::min(it->second.lo, *lo), std::max(it->second.hi, *hi)};
        }
    }
    return cal;
}

// A candidate's weights in int8, one scale per output channel; MatMul's B as
// [K, N] (transposed when Gemm's transB).
struct Int8Weights {
    std::vector<int8_t> values;
    std::vector<float> scales;
    std::vector<int64_t> dims;
    int64_t channels;
};

Int8Weights int8Weights(const Tensor& wT, Kind kind, bool transB)
{
    const std::vector<float> w = floatsOf(wT);
    // Output channels: Conv's W[0]; MatMul's B[1] (B[0] when Gemm transposes it).
    const int64_t channels = kind == Kind::Conv ? wT.dims[0] : transB ? wT.dims[0] : wT.dims[1];
    std::vector<int8_t> wq;
    std::vector<float> wScale;
    quantizeWeights(w, channels, kind == Kind::Conv || transB, wq, wScale);
    std::vector<int64_t> wDims = wT.dims;
    if (transB) {  // QLinearMatMul takes B as [K, N]
        std::vector<int8_t> t(wq.size());
        const int64_t n = wT.dims[0], k = wT.dims[1];
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < k; ++j)
                t[size_t(j * n + i)] = wq[size_t(i * k + j)];
        wq = std::move(t);
        wDims = {k, n};
    }
    return {std::move(wq), std::move(wScale), std::move(wDims), channels};
}

// Conv's bias in int32 at the accumulator's scale (x's scale times the channel's weight scale).
std::vector<int32_t> int32Bias(const std::vector<float>& bias, float xScale, const std::vector<float>& wScale)
{
    std::vector<int32_t> b(bias.size());
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = int32_t(std::clamp(std::nearbyint(double(bias[i]) / (double(xScale) * double(wScale[i]))),
                                  -2147483647.0, 2147483647.0));
    return b;
}

struct RewriteCounts {
    int addedNodes = 0, convs = 0, matmuls = 0, pools = 0, concats = 0;
};

// The rewrite, producers before readers: each candidate becomes QLinearConv or
// QLinearMatMul reading uint8 and writing uint8, followed by a DequantizeLinear
// back to float; MaxPools and Concats of quantized values stay in int8.
class Int8Rewriter {
public:
    Int8Rewriter(Model& model, const Topology& topo, const std::vector<Candidate>& candidates,
                 const std::map<ValueId, Range>& ranges)
        : model_(model), g_(model.graph), topo_(topo), ranges_(ranges), edit_(model.graph)
    {
        for (const Candidate& c : candidates)
            kindOf_[c.node] = c.kind;
    }

    RewriteCounts run()
    {
        planInt8Concats();
        for (NodeId id : topo_.order) {
            const Node node = g_.node(id);  // a copy: the graph grows below
            if (int8Concats_.count(id))
                rewriteConcat(id, node);
            else if (!kindOf_.count(id))
                rewritePool(id, node);
            else
                rewriteCandidate(node, kindOf_[id]);
        }
        dropUnreadDequantizes();
        edit_.commit();
        return counts_;
    }

private:
    struct Quantized {
        ValueId value;
        ValueId scale, zeroPoint;
    };

    std::pair<ValueId, ValueId> scalarConstants(const std::string& base, QuantParams q)
    {
        return std::make_pair(
            edit_.addConstant(base + "_scale", tensorFrom(DataType::Float, std::vector<float>{q.scale}, {})),
            edit_.addConstant(base + "_zero_point",
                              tensorFrom(DataType::UInt8, std::vector<uint8_t>{q.zeroPoint}, {})));
    }

    TensorType uint8Type(ValueId like) const { return TensorType{DataType::UInt8, g_.value(like).type.shape}; }

    // The uint8 form of float value x, made once (a QuantizeLinear) and reused.
    Quantized quantizedInput(ValueId x)
    {
        if (auto it = quantized_.find(x); it != quantized_.end())
            return it->second;
        const QuantParams q = activationParams(ranges_.at(x));
        const std::string base = g_.value(x).name + "_quantized";
        const auto [s, z] = scalarConstants(base, q);
        const ValueId xq = edit_.addValue(base, uint8Type(x));
        Node n;
        n.name = base;
        n.opType = "QuantizeLinear";
        n.inputs = {x, s, z};
        n.outputs = {xq};
        n.opset = model_.opsetVersion("");
        edit_.addNode(std::move(n));
        ++counts_.addedNodes;
        return quantized_[x] = {xq, s, z};
    }

    // A DequantizeLinear from `q` to float value `out`.
    void addDequantize(const std::string& name, const Quantized& q, ValueId out)
    {
        Node dq;
        dq.name = name;
        dq.opType = "DequantizeLinear";
        dq.opset = model_.opsetVersion("");
        dq.inputs = {q.value, q.scale, q.zeroPoint};
        dq.outputs = {out};
        edit_.addNode(std::move(dq));
        ++counts_.addedNodes;
    }

    // A Concat whose inputs are all quantized convolutions' outputs runs in int8 when
    // those outputs share one scale and zero point: the range of the Concat's output.
    void planInt8Concats()
    {
        if (model_.opsetVersion("") < 11)
            return;
        for (NodeId id : topo_.order) {
            const Node& n = g_.node(id);
            if (n.opType != "Concat" || !n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty())
                continue;
            bool ok = true;
            Range all{0, 0};
            for (ValueId v : n.inputs) {
                const NodeId p = v == kNone ? kNone : g_.value(v).producer;
                ok = ok && p != kNone && kindOf_.count(p) && kindOf_[p] == Kind::Conv && ranges_.count(v) &&
                     !sharedRange_.count(v) &&
                     std::count(n.inputs.begin(), n.inputs.end(), v) == 1;
                if (ok)
                    all = {std::min(all.lo, ranges_.at(v).lo), std::max(all.hi, ranges_.at(v).hi)};
            }
            if (!ok)
                continue;
            for (ValueId v : n.inputs)
                sharedRange_[v] = all;
            int8Concats_.insert(id);
        }
    }

    void rewriteConcat(NodeId id, const Node& node)
    {
        bool ready = true;
        for (ValueId v : node.inputs)
            ready = ready && quantized_.count(v);
        if (!ready)
            return;  // an input stayed float: so does the Concat
        const Quantized first = quantized_[node.inputs[0]];
        const ValueId out = node.outputs[0];
        const ValueId oq = edit_.addValue(g_.value(out).name + "_quantized", uint8Type(out));
        edit_.removeNode(id);
        Node cat = node;
        cat.id = kNone;
        cat.name = node.name + "_int8";
        cat.inputs.clear();
        for (ValueId v : node.inputs)
            cat.inputs.push_back(quantized_[v].value);
        cat.outputs = {oq};
        edit_.addNode(std::move(cat));
        addDequantize(node.name + "_dequantize", {oq, first.scale, first.zeroPoint}, out);
        ++counts_.concats;
        quantized_[out] = {oq, first.scale, first.zeroPoint};
    }

    // MaxPool commutes with quantization (same scale and zero point): a pooled int8
    // value stays int8 for the convolutions after it.
    void rewritePool(NodeId id, const Node& node)
    {
        const bool pool = node.opType == "MaxPool" && node.domain.empty() && node.outputs.size() == 1 &&
                          model_.opsetVersion("") >= 12 &&  // MaxPool takes uint8 from opset 12
                          node.input(0) != kNone && quantized_.count(node.input(0)) &&
                          node.attrInt("storage_order", 0) == 0 && node.attrInts("kernel_shape").size() == 2;
        if (!pool)
            return;
        const Quantized in = quantized_[node.input(0)];
        const ValueId m = node.outputs[0];
        const ValueId mq = edit_.addValue(g_.value(m).name + "_quantized", uint8Type(m));
        edit_.removeNode(id);
        Node p = node;
        p.id = kNone;
        p.name = node.name + "_int8";
        p.inputs = {in.value};
        p.outputs = {mq};
        p.implicitInputs.clear();
        edit_.addNode(std::move(p));
        addDequantize(node.name + "_dequantize", {mq, in.scale, in.zeroPoint}, m);
        ++counts_.pools;
        quantized_[m] = {mq, in.scale, in.zeroPoint};
    }

    void rewriteCandidate(const Node& node, Kind kind)
    {
        const ValueId x = node.input(0), y = node.outputs[0];
        if (!ranges_.count(x) || !ranges_.count(y))
            return;
        const Quantized qx = quantizedInput(x);
        const bool transB = kind == Kind::Gemm && node.attrInt("transB", 0) != 0;
        const Int8Weights w = int8Weights(*g_.value(node.input(1)).initializer, kind, transB);
        const int64_t channels = w.channels;
        const std::string base = node.name;
        const ValueId wv = edit_.addConstant(base + "_weight_int8", tensorFrom(DataType::Int8, w.values, w.dims));
        const ValueId wsv =
            edit_.addConstant(base + "_weight_scale", tensorFrom(DataType::Float, w.scales, {channels}));
        const ValueId wzv = edit_.addConstant(base + "_weight_zero_point",
                                              tensorFrom(DataType::Int8, std::vector<int8_t>(size_t(channels), 0), {channels}));
        const float xScale = g_.value(qx.scale).initializer->at<float>(0);

        // Gemm's bias is added after the product in float; the product's range is y's less the bias.
        std::optional<std::vector<float>> bias;
        if (node.input(2) != kNone)
            bias = floatsOf(*g_.value(node.input(2)).initializer);
        Range yRange = sharedRange_.count(y) ? sharedRange_[y] : ranges_.at(y);
        if (kind == Kind::Gemm && bias && !bias->empty()) {
            const auto [bLo, bHi] = std::minmax_element(bias->begin(), bias->end());
            yRange = {yRange.lo - *bHi, yRange.hi - *bLo};
        }
        const QuantParams qy = activationParams(yRange);
        const auto [ys, yz] = scalarConstants(g_.value(y).name + "_quantized", qy);
        const ValueId yq = edit_.addValue(g_.value(y).name + "_quantized", uint8Type(y));

        edit_.removeNode(node.id);
        Node q;
        q.name = base + "_int8";
        q.opset = model_.opsetVersion("");
        q.outputs = {yq};
        q.inputs = {qx.value, qx.scale, qx.zeroPoint, wv, wsv, wzv, ys, yz};
        if (kind == Kind::Conv) {
            q.opType = "QLinearConv";
            if (bias) {
                const std::vector<int32_t> b = int32Bias(*bias, xScale, w.scales);
                q.inputs.push_back(
                    edit_.addConstant(base + "_bias_int32", tensorFrom(DataType::Int32, b, {int64_t(b.size())})));
            }
            for (const Attribute& a : node.attributes)
                if (a.name != "activation" && a.name != "activation_params")
                    q.attributes.push_back(a);
            ++counts_.convs;
        } else {
            q.opType = "QLinearMatMul";
            ++counts_.matmuls;
        }
        edit_.addNode(std::move(q));
        addFloatOutput(node, kind == Kind::Gemm && bias, {yq, ys, yz});
    }

    // Back to float for readers that are not quantized (removed again at the end
    // when none is left), then Gemm's bias in float when `addBias`.
    void addFloatOutput(const Node& node, bool addBias, const Quantized& yq)
    {
        const ValueId y = node.outputs[0];
        const std::string base = node.name;
        const ValueId dqOut = addBias ? edit_.addValue(g_.value(y).name + "_product", g_.value(y).type) : y;
        addDequantize(base + "_dequantize", yq, dqOut);
        if (addBias) {
            Node add;
            add.name = base + "_bias";
            add.opType = "Add";
            add.opset = model_.opsetVersion("");
            add.inputs = {dqOut, node.input(2)};
            add.outputs = {y};
            edit_.addNode(std::move(add));
            ++counts_.addedNodes;
        } else {
            quantized_[y] = yq;
        }
    }

    // Readers quantized later took the uint8 form directly (quantizedInput), so a
    // DequantizeLinear nobody reads any more goes.
    void dropUnreadDequantizes()
    {
        for (const auto& [value, q] : quantized_) {
            const NodeId producer = g_.value(value).producer;
            if (producer != kNone && g_.value(value).consumers.empty() && !g_.value(value).isGraphOutput &&
                g_.node(producer).opType == "DequantizeLinear") {
                edit_.removeNode(producer);
                --counts_.addedNodes;
            }
        }
    }

    Model& model_;
    Graph& g_;
    const Topology& topo_;
    const std::map<ValueId, Range>& ranges_;
    GraphEditor edit_;
    std::map<NodeId, Kind> kindOf_;
    std::map<ValueId, Quantized> quantized_;  // float value -> its uint8 form
    std::map<ValueId, Range> sharedRange_;    // inputs of int8 Concats: the Concat's range
    std::set<NodeId> int8Concats_;
    RewriteCounts counts_;
};

class QuantizePass final : public Pass {
public:
    PassStats run(Model& model, const PassContext& context) override
    {
        PassStats stats;
        if (model.opsetVersion("") < 10) {
            stats.detail = "nothing quantized: QLinearConv needs ONNX opset 10 or later";
            return stats;
        }
        const Model original = model;  // for the float timing (tensors are shared, not copied)
        const Topology topo = buildTopology(model.graph);
        const std::vector<Candidate> candidates = findCandidates(model.graph, topo);
        if (candidates.empty()) {
            stats.detail = "nothing to quantize";
            return stats;
        }
        const Calibration cal = calibrate(model, candidates, context);
        const RewriteCounts n = Int8Rewriter(model, topo, candidates, cal.ranges).run();
        stats.fused = n.convs + n.matmuls;
        stats.added = n.addedNodes;
        stats.detail = "quantized " + std::to_string(n.convs) + " convolutions and " + std::to_string(n.matmuls) +
                       " matrix products to int8 (" + std::to_string(n.pools) + " max-pools and " +
                       std::to_string(n.concats) + " concatenations kept in int8; calibrated on " +
                       std::to_string(cal.samples.size()) + " inputs)";
        try {
            measure(model, original, cal.samples, cal.floatOutputs, stats);
        } catch (const Error& e) {
            stats.detail += "; not measured: " + e.message();
        }
        return stats;
    }

private:
    // Output error against the float model on the calibration inputs, and the
    // single-thread latency of both.
    static void measure(const Model& model, const Model& floatModel, const std::vector<std::vector<Tensor>>& samples,
                        const std::vector<std::vector<Tensor>>& floatOutputs, PassStats& stats)
    {
        auto compiled = runtime().compile(model);
        double error = 0;
        for (size_t i = 0; i < samples.size(); ++i) {
            compiled->setInputs(samples[i]);
            compiled->serialExecutor(1)->run();
            const auto outs = compiled->outputs();
            for (size_t k = 0; k < outs.size(); ++k)
                error = std::max(error, relativeError(outs[k], floatOutputs[i][k]));
        }
        const double quantizedSeconds = medianRunSeconds(*compiled, 5);
        auto compiledFloat = runtime().compile(floatModel);
        compiledFloat->setInputs(samples[0]);
        const double floatSeconds = medianRunSeconds(*compiledFloat, 5);
        stats.detail += "; output error " + fmt(error) + " of the float output's range (max |difference| / (max - min)); 1 thread: " +
                        fmt(floatSeconds * 1e3) + " ms float -> " + fmt(quantizedSeconds * 1e3) + " ms int8";
    }
};

}  // namespace

std::unique_ptr<Pass> makeQuantizePass() { return std::make_unique<QuantizePass>(); }

}  // namespace ramiel::passes
