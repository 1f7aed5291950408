#include "core/runtime/torch/winograd.h"

#include "core/runtime/torch/fresh_tensor.h"

#include "core/ir/fused_ops.h"
#include "core/util/environment.h"

#include <algorithm>

namespace ramiel {

namespace {

constexpr int64_t kBlock = 16;

bool allOnes(const std::vector<int64_t>& v)
{
    return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

// The weights' [O, I/groups, kH, kW] and the output's [N, C, H, W] of a 2-D float
// convolution (Conv, or FusedConv with a post-op activation) with constant weights and
// bias (`sources`: constantSources), channels in whole blocks and known output rows and
// columns; empty where `n` is not one.
struct ConvolutionShape {
    std::vector<int64_t> weights, output;
};

ConvolutionShape blockableConvolution(const Graph& g, const std::vector<ValueId>& sources, const Node& n)
{
    const bool conv = (n.domain.empty() || n.domain == "ai.onnx") && n.opType == "Conv";
    const bool fused = n.domain == kRamielDomain && n.opType == kFusedConv;
    if (!conv && !fused)
        return {};
    if (fused && n.attrString("activation", "") == "Silu")  // applied after the primitive, on the logical layout
        return {};
    if (n.outputs.empty() || n.outputs[0] == kNone || n.input(0) == kNone || n.input(1) == kNone)
        return {};
    auto constant = [&](ValueId v) { return sources[size_t(v)] == kNone ? nullptr : &g.value(sources[size_t(v)]); };
    const Value* w = constant(n.input(1));
    if (!w || w->initializer->dtype != DataType::Float || w->initializer->dims.size() != 4)
        return {};
    const Value* b = n.input(2) == kNone ? nullptr : constant(n.input(2));
    if (n.input(2) != kNone && (!b || b->initializer->dtype != DataType::Float))
        return {};
    const auto& x = g.value(n.input(0)).type;
    const auto& y = g.value(n.outputs[0]).type;
    if (!x.shape || x.shape->rank() != 4 || !y.shape || y.shape->rank() != 4 || y.dtype != DataType::Float)
        return {};
    const auto& dims = y.shape->dims;
    if (!dims[1].isKnown() || !dims[2].isKnown() || !dims[3].isKnown() || dims[2].value > 56 * 56 ||
        dims[3].value > 56 * 56)
        return {};  // (also keeps their product in range)
    const std::vector<int64_t>& k = w->initializer->dims;  // [O, I, kH, kW]
    if (k[0] % kBlock != 0 || k[1] % kBlock != 0)
        return {};
    return {k, {dims[0].isKnown() ? dims[0].value : 1, dims[1].value, dims[2].value, dims[3].value}};
}

// Whether the runtime will run node `n` as a Winograd convolution with a post-op
// activation (or none), judged from its attributes, constant weights and the
// inferred shapes, with channels in whole blocks.
bool isWinogradConvolution(const Graph& g, const std::vector<ValueId>& sources, const Node& n)
{
    const ConvolutionShape c = blockableConvolution(g, sources, n);
    return !c.weights.empty() && wantsWinograd(c.weights[1], c.weights[0], c.weights[2], c.weights[3],
                                               c.output[2] * c.output[3], n.attrInt("group", 1),
                                               n.attrInts("strides"), n.attrInts("dilations"));
}

// A convolution that a blocked stage may hold (wantsBlockedStage), and whether it is the
// stage's grouped one.
enum class StageRole { None, OneByOne, Grouped };

StageRole stageRole(const Graph& g, const std::vector<ValueId>& sources, const Node& n)
{
    const ConvolutionShape c = blockableConvolution(g, sources, n);
    if (c.weights.empty() || !allOnes(n.attrInts("dilations")))
        return StageRole::None;
    const int64_t groups = n.attrInt("group", 1), in = c.weights[1] * groups, out = c.weights[0];
    const int64_t pixels = c.output[2] * c.output[3];
    const std::vector<int64_t> pads = n.attrInts("pads");
    if (groups == 1 && c.weights[2] == 1 && c.weights[3] == 1 &&
        std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }))
        return wantsBlockedOneByOne(in, out, pixels) ? StageRole::OneByOne : StageRole::None;
    return groups > 1 && wantsBlockedStage(groups, in, out, pixels) ? StageRole::Grouped : StageRole::None;
}

// Whether every reader of v reads it as its input or summand, and passes `reads`.
template <typename Reads>
bool readAsInputOrSummand(const Graph& g, const Value& v, Reads&& reads)
{
    if (v.isGraphOutput || v.consumers.empty())
        return false;
    for (NodeId c : v.consumers) {
        const Node& reader = g.node(c);
        if (!reads(reader) ||
            std::find(reader.implicitInputs.begin(), reader.implicitInputs.end(), v.id) != reader.implicitInputs.end())
            return false;
        for (size_t i = 0; i < reader.inputs.size(); ++i)
            if (reader.inputs[i] == v.id && i != 0 && i != 3)
                return false;
    }
    return true;
}

}  // namespace

bool wantsWinograd(int64_t in, int64_t out, int64_t kh, int64_t kw, int64_t outPixels, int64_t groups,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations)
{
    return groups == 1 && kh == 3 && kw == 3 && in >= 32 && out >= 64 && in * out >= 24 * (in + out) &&
           outPixels >= 14 * 14 && outPixels <= 56 * 56 && allOnes(strides) && allOnes(dilations);
}

WinogradChoice winogradChoice()
{
    return WinogradChoice(environmentChoice("RAMIEL_WINOGRAD", {"measured", "always", "never"}));
}

GroupedLayoutChoice groupedLayoutChoice()
{
    return GroupedLayoutChoice(environmentChoice("RAMIEL_GROUPED_LAYOUT", {"measured", "channels-last", "blocked"}));
}

bool wantsBlockedStage(int64_t groups, int64_t in, int64_t out, int64_t outPixels)
{
    const int64_t perGroup = in / groups;
    return in == out && in % 512 == 0 && (perGroup == 16 || perGroup == 32) && outPixels * in >= 14 * 14 * 1024;
}

bool wantsBlockedOneByOne(int64_t in, int64_t out, int64_t outPixels)
{
    return in >= 512 && out >= 512 && outPixels >= 14 * 14;
}

BlockedLayout blockedLayout(const Graph& g, const std::vector<ValueId>& sources, bool winograd, bool stages)
{
    BlockedLayout layout{std::vector<bool>(g.valueCount(), false), std::vector<bool>(g.nodeCount(), false)};
#if RAMIEL_HAVE_DNNL
    for (const Node& n : g.nodes())
        if (winograd && isWinogradConvolution(g, sources, n))
            layout.values[size_t(n.outputs[0])] = readAsInputOrSummand(
                g, g.value(n.outputs[0]), [&](const Node& reader) { return isWinogradConvolution(g, sources, reader); });
    if (!stages)
        return layout;
    // Blocked stages: the grouped convolutions that want one, and the 1x1 convolutions that
    // feed them or read their outputs; the values passing only between these stay blocked
    // (ResNeXt's blocks: 1x1 -> grouped 3x3 -> 1x1, and the blocks' outputs between them).
    std::vector<StageRole> role(g.nodeCount(), StageRole::None);
    for (const Node& n : g.nodes())
        role[size_t(n.id)] = stageRole(g, sources, n);
    auto grouped = [&](NodeId id) { return id != kNone && role[size_t(id)] == StageRole::Grouped; };
    std::vector<bool> stage(g.nodeCount(), false);
    for (const Node& n : g.nodes()) {
        if (role[size_t(n.id)] == StageRole::Grouped)
            stage[size_t(n.id)] = true;
        else if (role[size_t(n.id)] == StageRole::OneByOne) {
            const Value& out = g.value(n.outputs[0]);
            stage[size_t(n.id)] = grouped(g.value(n.input(0)).producer) ||
                                  std::any_of(out.consumers.begin(), out.consumers.end(), grouped);
        }
    }
    for (const Node& n : g.nodes()) {
        if (!stage[size_t(n.id)] || layout.values[size_t(n.outputs[0])])
            continue;
        const Value& v = g.value(n.outputs[0]);
        if (!readAsInputOrSummand(g, v, [&](const Node& reader) { return bool(stage[size_t(reader.id)]); }))
            continue;
        layout.values[size_t(v.id)] = true;  // and its producer and readers run blocked
        layout.stages[size_t(n.id)] = true;
        for (NodeId c : v.consumers)
            layout.stages[size_t(c)] = true;
    }
#else
    (void)g;
    (void)sources;
    (void)winograd;
    (void)stages;
#endif
    return layout;
}

bool isBlocked(const at::Tensor& t)
{
    return t.defined() && t.dim() == 5 && t.size(4) == kBlock && t.scalar_type() == at::kFloat;
}

at::Tensor emptyBlocked(const std::vector<int64_t>& logical)
{
    return emptyFloat({logical[0], logical[1] / kBlock, logical[2], logical[3], kBlock}, at::MemoryFormat::Contiguous);
}

std::vector<int64_t> logicalSizes(const at::Tensor& t)
{
    if (!isBlocked(t))
        return t.sizes().vec();
    return {t.size(0), t.size(1) * kBlock, t.size(2), t.size(3)};
}

at::Tensor unblocked(const at::Tensor& blocked)
{
    const std::vector<int64_t> s = logicalSizes(blocked);
    // [N, C/16, H, W, 16] -> [N, H, W, C/16, 16] = NHWC, viewed as NCHW.
    // (reshape: an empty tensor counts as contiguous whatever its strides, which view refuses)
    return blocked.permute({0, 2, 3, 1, 4}).contiguous().reshape({s[0], s[2], s[3], s[1]}).permute({0, 3, 1, 2});
}

}  // namespace ramiel
