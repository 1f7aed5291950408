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

// Whether the runtime will run node `n` as a Winograd convolution with a post-op
// activation (or none), judged from its attributes, constant weights and the
// inferred shapes, with channels in whole blocks.
bool isWinogradConvolution(const Graph& g, const Node& n)
{
    const bool conv = (n.domain.empty() || n.domain == "ai.onnx") && n.opType == "Conv";
    const bool fused = n.domain == kRamielDomain && n.opType == kFusedConv;
    if (!conv && !fused)
        return false;
    if (fused && n.attrString("activation", "") == "Silu")  // applied after the primitive, on the logical layout
        return false;
    if (n.outputs.empty() || n.outputs[0] == kNone || n.input(0) == kNone || n.input(1) == kNone)
        return false;
    const Value& w = g.value(n.input(1));
    if (!w.isConstant() || w.initializer->dtype != DataType::Float || w.initializer->dims.size() != 4)
        return false;
    if (n.input(2) != kNone && (!g.value(n.input(2)).isConstant() || g.value(n.input(2)).initializer->dtype != DataType::Float))
        return false;
    const auto& x = g.value(n.input(0)).type;
    const auto& y = g.value(n.outputs[0]).type;
    if (!x.shape || x.shape->rank() != 4 || !y.shape || y.shape->rank() != 4 || y.dtype != DataType::Float)
        return false;
    const auto& dims = y.shape->dims;
    if (!dims[2].isKnown() || !dims[3].isKnown() || dims[2].value > 56 * 56 || dims[3].value > 56 * 56)
        return false;  // (also keeps their product in range)
    const std::vector<int64_t>& k = w.initializer->dims;  // [O, I, kH, kW]
    return k[0] % kBlock == 0 && k[1] % kBlock == 0 &&
           wantsWinograd(k[1], k[0], k[2], k[3], dims[2].value * dims[3].value, n.attrInt("group", 1),
                         n.attrInts("strides"), n.attrInts("dilations"));
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

std::vector<bool> blockedValues(const Graph& g)
{
    std::vector<bool> blocked(g.valueCount(), false);
#if RAMIEL_HAVE_DNNL
    if (winogradChoice() == WinogradChoice::Never)
        return blocked;
    for (const Node& n : g.nodes()) {
        if (!isWinogradConvolution(g, n))
            continue;
        const Value& v = g.value(n.outputs[0]);
        if (v.isGraphOutput || v.consumers.empty())
            continue;
        bool allWinograd = true;
        for (NodeId c : v.consumers) {
            const Node& reader = g.node(c);
            bool asInputOrSummand = isWinogradConvolution(g, reader) &&
                                    std::find(reader.implicitInputs.begin(), reader.implicitInputs.end(), v.id) ==
                                        reader.implicitInputs.end();
            for (size_t i = 0; i < reader.inputs.size(); ++i)
                if (reader.inputs[i] == v.id && i != 0 && i != 3)
                    asInputOrSummand = false;
            allWinograd = allWinograd && asInputOrSummand;
        }
        blocked[size_t(v.id)] = allWinograd;
    }
#else
    (void)g;
#endif
    return blocked;
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
    return blocked.permute({0, 2, 3, 1, 4}).contiguous().view({s[0], s[2], s[3], s[1]}).permute({0, 3, 1, 2});
}

}  // namespace ramiel
