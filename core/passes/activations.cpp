#include "core/passes/activations.h"

#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"

#include <cfloat>

namespace ramiel::passes {

namespace {

// A float scalar constant input, or `fallback` when the input is omitted.
std::optional<float> scalarInput(const Graph& g, const Node& n, size_t i, float fallback)
{
    const ValueId v = n.input(i);
    return v == kNone ? std::optional<float>(fallback) : floatScalar(g, v);
}

}  // namespace

std::optional<FusedActivation> activationOf(const Graph& g, const Node& n)
{
    if (n.outputs.size() != 1 || n.input(0) == kNone)
        return std::nullopt;
    if (n.domain == kRamielDomain && (n.opType == kSilu || n.opType == kHardSwish))
        return FusedActivation{n.opType, {}};
    if (!n.domain.empty())
        return std::nullopt;
    if (n.opType == "Relu" || n.opType == "Sigmoid" || n.opType == "HardSwish")
        return FusedActivation{n.opType, {}};
    if (n.opType == "LeakyRelu")
        return FusedActivation{n.opType, {n.attrFloat("alpha", 0.01f)}};
    if (n.opType == "Clip") {
        if (n.opset < 11)
            return FusedActivation{n.opType, {n.attrFloat("min", -FLT_MAX), n.attrFloat("max", FLT_MAX)}};
        const auto lo = scalarInput(g, n, 1, -FLT_MAX), hi = scalarInput(g, n, 2, FLT_MAX);
        if (!lo || !hi)
            return std::nullopt;
        return FusedActivation{n.opType, {*lo, *hi}};
    }
    return std::nullopt;
}

void addActivationAttributes(Node& fused, const FusedActivation& a)
{
    fused.attributes.push_back(Attribute::ofString("activation", a.name));
    if (!a.params.empty())
        fused.attributes.push_back(Attribute::ofFloats("activation_params", a.params));
}

}  // namespace ramiel::passes
