// Conv followed by Relu, LeakyRelu, Sigmoid, HardSwish or Clip becomes one
// ai.ramiel FusedConv node (core/ir/fused_ops.h): the runtime applies the
// activation in place on the convolution's fresh output, saving a node, a
// tensor and a pass over memory. Fires only when the Conv's output feeds the
// activation alone.
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <cfloat>

namespace ramiel::passes {

namespace {

// A float scalar constant input, or `fallback` when the input is omitted.
std::optional<float> scalarInput(const Graph& g, const Node& n, size_t i, float fallback)
{
    const ValueId v = n.input(i);
    if (v == kNone)
        return fallback;
    if (!g.value(v).isConstant())
        return std::nullopt;
    const Tensor& t = *g.value(v).initializer;
    if (t.dtype != DataType::Float || t.numel() != 1 || !t.hasData())
        return std::nullopt;
    return t.at<float>(0);
}

// The activation's name and parameters, when the node is one FusedConv takes.
std::optional<std::pair<std::string, std::vector<float>>> activationOf(const Graph& g, const Node& n)
{
    if (!n.domain.empty() || n.outputs.size() != 1 || n.input(0) == kNone)
        return std::nullopt;
    if (n.opType == "Relu" || n.opType == "Sigmoid" || n.opType == "HardSwish")
        return std::make_pair(n.opType, std::vector<float>{});
    if (n.opType == "LeakyRelu")
        return std::make_pair(n.opType, std::vector<float>{n.attrFloat("alpha", 0.01f)});
    if (n.opType == "Clip") {
        if (n.opset < 11)
            return std::make_pair(n.opType, std::vector<float>{n.attrFloat("min", -FLT_MAX), n.attrFloat("max", FLT_MAX)});
        const auto lo = scalarInput(g, n, 1, -FLT_MAX), hi = scalarInput(g, n, 2, FLT_MAX);
        if (!lo || !hi)
            return std::nullopt;
        return std::make_pair(n.opType, std::vector<float>{*lo, *hi});
    }
    return std::nullopt;
}

class FuseConvActivationPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& conv = g.node(id);
            if (conv.opType != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 || conv.outputs[0] == kNone)
                continue;
            const ValueId x = conv.outputs[0];
            const DataType type = g.value(x).type.dtype;
            const NodeId actId = edit.soleConsumer(x);
            if (actId == kNone || edit.readBySubgraph(x) || (type != DataType::Float && type != DataType::Undefined))
                continue;
            const Node& act = g.node(actId);
            const auto activation = activationOf(g, act);
            if (!activation || act.input(0) != x)
                continue;
            const ValueId y = act.outputs[0];
            edit.removeNode(actId);
            Node& fused = g.node(id);
            fused.domain = kRamielDomain;
            fused.opType = kFusedConv;
            fused.opset = 1;
            fused.schemaKnown = false;
            Attribute a;
            a.name = "activation";
            a.kind = Attribute::Kind::String;
            a.s = activation->first;
            fused.attributes.push_back(a);
            if (!activation->second.empty()) {
                Attribute p;
                p.name = "activation_params";
                p.kind = Attribute::Kind::Floats;
                p.floats = activation->second;
                fused.attributes.push_back(p);
            }
            edit.setOutput(id, 0, y);
            ++stats.fused;
            ++stats.removed;
        }
        edit.commit();
        if (stats.fused && model.opsetVersion(kRamielDomain) == 0)
            model.opsets.push_back({kRamielDomain, 1});
        stats.detail = "fused " + std::to_string(stats.fused) + " activations into convolutions";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseConvActivationPass() { return std::make_unique<FuseConvActivationPass>(); }

}  // namespace ramiel::passes
