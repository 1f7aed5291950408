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

bool floatConstant(const Graph& g, ValueId v)
{
    return v != kNone && g.value(v).isConstant() && g.value(v).initializer->dtype == DataType::Float &&
           g.value(v).initializer->hasData();
}

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
        if (exact && shape && shape->rank() == 4 && floatConstant(g, n.input(1)) &&
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

class QuantizePass final : public Pass {
public:
    PassStats run(Model& model, const PassContext& context) override
    {
        Graph& g = model.graph;
        PassStats stats;
        if (model.opsetVersion("") < 10) {
            stats.detail = "nothing quantized: QLinearConv needs ONNX opset 10 or later";
            return stats;
        }
        const Model original = model;  // for the float timing (tensors are shared, not copied)
        std::vector<Candidate> candidates;
        const Topology topo = buildTopology(g);
        for (NodeId id : topo.order)
            if (const auto kind = candidateKind(g, g.node(id)))
                candidates.push_back({id, *kind});
        if (candidates.empty()) {
            stats.detail = "nothing to quantize";
            return stats;
        }

        // Calibration: the float model with every candidate's input and output as extra outputs.
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
        std::vector<std::vector<Tensor>> samples = context.calibrationInputs;
        if (samples.empty())
            for (int i = 0; i < std::max(1, context.calibrationSamples); ++i)
                samples.push_back(compiledProbe->randomInputs(1, context.seed + uint64_t(i)));
        std::map<ValueId, Range> ranges;
        std::vector<std::vector<Tensor>> floatOutputs;
        for (const auto& inputs : samples) {
            compiledProbe->setInputs(inputs);
            compiledProbe->serialExecutor(1)->run();
            const std::vector<Tensor> outs = compiledProbe->outputs();
            floatOutputs.emplace_back(outs.begin(), outs.begin() + long(firstProbe));
            for (const auto& [v, index] : probeIndex) {
                const auto values = outs[index].toDoubles();
                if (!values || values->empty())
                    continue;
                const auto [lo, hi] = std::minmax_element(values->begin(), values->end());
                auto it = ranges.find(v);
                if (it == ranges.end())
                    ranges[v] = {*lo, *hi};
                else
                    it->second = {std::min(it->second.lo, *lo), std::max(it->second.hi, *hi)};
            }
        }
        compiledProbe.reset();

        // Rewrite, producers before readers.
        GraphEditor edit(g);
        struct Quantized {
            ValueId value;
            ValueId scale, zeroPoint;
        };
        std::map<ValueId, Quantized> quantized;  // float value -> its uint8 form
        int addedNodes = 0, convs = 0, matmuls = 0;
        auto scalarConstants = [&](const std::string& base, QuantParams q) {
            return std::make_pair(edit.addConstant(base + "_scale", tensorFrom(DataType::Float, std::vector<float>{q.scale}, {})),
                                  edit.addConstant(base + "_zero_point",
                                                   tensorFrom(DataType::UInt8, std::vector<uint8_t>{q.zeroPoint}, {})));
        };
        auto uint8Type = [&](ValueId like) { return TensorType{DataType::UInt8, g.value(like).type.shape}; };
        auto quantizedInput = [&](ValueId x) -> Quantized {
            if (auto it = quantized.find(x); it != quantized.end())
                return it->second;
            const QuantParams q = activationParams(ranges[x]);
            const std::string base = g.value(x).name + "_quantized";
            const auto [s, z] = scalarConstants(base, q);
            const ValueId xq = edit.addValue(base, uint8Type(x));
            Node n;
            n.name = base;
            n.opType = "QuantizeLinear";
            n.inputs = {x, s, z};
            n.outputs = {xq};
            n.opset = model.opsetVersion("");
            edit.addNode(std::move(n));
            ++addedNodes;
            return quantized[x] = {xq, s, z};
        };

        std::map<NodeId, Kind> kindOf;
        for (const Candidate& c : candidates)
            kindOf[c.node] = c.kind;
        // A Concat whose inputs are all quantized convolutions' outputs runs in int8 when
        // those outputs share one scale and zero point: the range of the Concat's output.
        std::map<ValueId, Range> sharedRange;
        std::set<NodeId> int8Concats;
        if (model.opsetVersion("") >= 11) {
            for (NodeId id : topo.order) {
                const Node& n = g.node(id);
                if (n.opType != "Concat" || !n.domain.empty() || n.outputs.size() != 1 || n.inputs.empty())
                    continue;
                bool ok = true;
                Range all{0, 0};
                for (ValueId v : n.inputs) {
                    const NodeId p = v == kNone ? kNone : g.value(v).producer;
                    ok = ok && p != kNone && kindOf.count(p) && kindOf[p] == Kind::Conv && ranges.count(v) &&
                         !sharedRange.count(v) &&
                         std::count(n.inputs.begin(), n.inputs.end(), v) == 1;
                    if (ok)
                        all = {std::min(all.lo, ranges[v].lo), std::max(all.hi, ranges[v].hi)};
                }
                if (!ok)
                    continue;
                for (ValueId v : n.inputs)
                    sharedRange[v] = all;
                int8Concats.insert(id);
            }
        }
        int pools = 0, concats = 0;
        for (NodeId id : topo.order) {
            const Node node = g.node(id);  // a copy: the graph grows below
            if (int8Concats.count(id)) {
                bool ready = true;
                for (ValueId v : node.inputs)
                    ready = ready && quantized.count(v);
                if (!ready)
                    continue;  // an input stayed float: so does the Concat
                const Quantized first = quantized[node.inputs[0]];
                const ValueId out = node.outputs[0];
                const ValueId oq = edit.addValue(g.value(out).name + "_quantized", uint8Type(out));
                edit.removeNode(id);
                Node cat = node;
                cat.id = kNone;
                cat.name = node.name + "_int8";
                cat.inputs.clear();
                for (ValueId v : node.inputs)
                    cat.inputs.push_back(quantized[v].value);
                cat.outputs = {oq};
                edit.addNode(std::move(cat));
                Node dq;
                dq.name = node.name + "_dequantize";
                dq.opType = "DequantizeLinear";
                dq.opset = model.opsetVersion("");
                dq.inputs = {oq, first.scale, first.zeroPoint};
                dq.outputs = {out};
                edit.addNode(std::move(dq));
                ++addedNodes;
                ++concats;
                quantized[out] = {oq, first.scale, first.zeroPoint};
                continue;
            }
            if (!kindOf.count(id)) {
                // MaxPool commutes with quantization (same scale and zero point): a pooled int8
                // value stays int8 for the convolutions after it.
                const bool pool = node.opType == "MaxPool" && node.domain.empty() && node.outputs.size() == 1 &&
                                  model.opsetVersion("") >= 12 &&  // MaxPool takes uint8 from opset 12
                                  node.input(0) != kNone && quantized.count(node.input(0)) &&
                                  node.attrInt("storage_order", 0) == 0 && node.attrInts("kernel_shape").size() == 2;
                if (!pool)
                    continue;
                const Quantized in = quantized[node.input(0)];
                const ValueId m = node.outputs[0];
                const ValueId mq = edit.addValue(g.value(m).name + "_quantized", uint8Type(m));
                edit.removeNode(id);
                Node p = node;
                p.id = kNone;
                p.name = node.name + "_int8";
                p.inputs = {in.value};
                p.outputs = {mq};
                p.implicitInputs.clear();
                edit.addNode(std::move(p));
                Node dq;
                dq.name = node.name + "_dequantize";
                dq.opType = "DequantizeLinear";
                dq.opset = model.opsetVersion("");
                dq.inputs = {mq, in.scale, in.zeroPoint};
                dq.outputs = {m};
                edit.addNode(std::move(dq));
                ++addedNodes;
                ++pools;
                quantized[m] = {mq, in.scale, in.zeroPoint};
                continue;
            }
            const Candidate c{id, kindOf[id]};
            const ValueId x = node.input(0), y = node.outputs[0];
            if (!ranges.count(x) || !ranges.count(y))
                continue;
            const Quantized qx = quantizedInput(x);
            const Tensor& wT = *g.value(node.input(1)).initializer;
            const std::vector<float> w = floatsOf(wT);
            const bool transB = c.kind == Kind::Gemm && node.attrInt("transB", 0) != 0;
            // Output channels: Conv's W[0]; MatMul's B[1] (B[0] when Gemm transposes it).
            const int64_t channels = c.kind == Kind::Conv ? wT.dims[0] : transB ? wT.dims[0] : wT.dims[1];
            std::vector<int8_t> wq;
            std::vector<float> wScale;
            quantizeWeights(w, channels, c.kind == Kind::Conv || transB, wq, wScale);
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
            const std::string base = node.name;
            const ValueId wv = edit.addConstant(base + "_weight_int8", tensorFrom(DataType::Int8, wq, wDims));
            const ValueId wsv = edit.addConstant(base + "_weight_scale", tensorFrom(DataType::Float, wScale, {channels}));
            const ValueId wzv = edit.addConstant(base + "_weight_zero_point",
                                                 tensorFrom(DataType::Int8, std::vector<int8_t>(size_t(channels), 0), {channels}));
            const float xScale = g.value(qx.scale).initializer->at<float>(0);

            // Gemm's bias is added after the product in float; the product's range is y's less the bias.
            std::optional<std::vector<float>> bias;
            if (node.input(2) != kNone)
                bias = floatsOf(*g.value(node.input(2)).initializer);
            Range yRange = sharedRange.count(y) ? sharedRange[y] : ranges[y];
            if (c.kind == Kind::Gemm && bias && !bias->empty()) {
                const auto [bLo, bHi] = std::minmax_element(bias->begin(), bias->end());
                yRange = {yRange.lo - *bHi, yRange.hi - *bLo};
            }
            const QuantParams qy = activationParams(yRange);
            const auto [ys, yz] = scalarConstants(g.value(y).name + "_quantized", qy);
            const ValueId yq = edit.addValue(g.value(y).name + "_quantized", uint8Type(y));

            edit.removeNode(node.id);
            Node q;
            q.name = base + "_int8";
            q.opset = model.opsetVersion("");
            q.outputs = {yq};
            if (c.kind == Kind::Conv) {
                q.opType = "QLinearConv";
                q.inputs = {qx.value, qx.scale, qx.zeroPoint, wv, wsv, wzv, ys, yz};
                if (bias) {
                    std::vector<int32_t> b(bias->size());
                    for (size_t i = 0; i < b.size(); ++i)
                        b[i] = int32_t(std::clamp(std::nearbyint(double((*bias)[i]) / (double(xScale) * double(wScale[i]))),
                                                  -2147483647.0, 2147483647.0));
                    q.inputs.push_back(
                        edit.addConstant(base + "_bias_int32", tensorFrom(DataType::Int32, b, {int64_t(b.size())})));
                }
                for (const Attribute& a : node.attributes)
                    if (a.name != "activation" && a.name != "activation_params")
                        q.attributes.push_back(a);
                ++convs;
            } else {
                q.opType = "QLinearMatMul";
                q.inputs = {qx.value, qx.scale, qx.zeroPoint, wv, wsv, wzv, ys, yz};
                ++matmuls;
            }
            edit.addNode(std::move(q));

            // Back to float for readers that are not quantized (removed again below when none is left).
            const bool addBias = c.kind == Kind::Gemm && bias;
            const ValueId dqOut = addBias ? edit.addValue(g.value(y).name + "_product", g.value(y).type) : y;
            Node dq;
            dq.name = base + "_dequantize";
            dq.opType = "DequantizeLinear";
            dq.opset = model.opsetVersion("");
            dq.inputs = {yq, ys, yz};
            dq.outputs = {dqOut};
            edit.addNode(std::move(dq));
            ++addedNodes;
            if (addBias) {
                Node add;
                add.name = base + "_bias";
                add.opType = "Add";
                add.opset = model.opsetVersion("");
                add.inputs = {dqOut, node.input(2)};
                add.outputs = {y};
                edit.addNode(std::move(add));
                ++addedNodes;
            } else {
                quantized[y] = {yq, ys, yz};
            }
        }

        // Readers quantized later took the uint8 form directly (quantizedInput), so a
        // DequantizeLinear nobody reads any more goes.
        for (const auto& [value, q] : quantized) {
            const NodeId producer = g.value(value).producer;
            if (producer != kNone && g.value(value).consumers.empty() && !g.value(value).isGraphOutput &&
                g.node(producer).opType == "DequantizeLinear") {
                edit.removeNode(producer);
                --addedNodes;
            }
        }
        edit.commit();
        stats.fused = convs + matmuls;
        stats.added = addedNodes;
        stats.detail = "quantized " + std::to_string(convs) + " convolutions and " + std::to_string(matmuls) +
                       " matrix products to int8 (" + std::to_string(pools) + " max-pools and " + std::to_string(concats) +
                       " concatenations kept in int8; calibrated on " +
                       std::to_string(samples.size()) + " inputs)";
        try {
            measure(model, original, samples, floatOutputs, stats);
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
