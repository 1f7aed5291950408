// Conv followed by Relu, LeakyRelu, Sigmoid, HardSwish, Clip or SiLU (fuse-silu's
// ai.ramiel.Silu) becomes one
// ai.ramiel FusedConv node (core/ir/fused_ops.h): the runtime applies the
// activation in place on the convolution's fresh output, saving a node, a
// tensor and a pass over memory. So does Conv -> Add of a value of the same
// shape (-> activation) at a residual block's end, the Add's other input
// becoming the FusedConv's summand. Fires only when the Conv's output feeds
// the activation (or the Add) alone, and the Add's output the activation alone
// (else the Add is fused without it).
#include "core/ir/fused_ops.h"
#include "core/passes/activations.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <optional>

namespace ramiel::passes {

namespace {

// Both shapes known (every dimension a number or a named symbol) and equal.
bool sameShape(const Graph& g, ValueId a, ValueId b)
{
    const auto& x = g.value(a).type.shape;
    const auto& y = g.value(b).type.shape;
    if (!x || !y || !(*x == *y))
        return false;
    return std::all_of(x->dims.begin(), x->dims.end(), [](const Dim& d) { return d.isKnown() || !d.symbol.empty(); });
}

// The summand when `add` adds a value of x's shape to x (and nothing else).
ValueId summandOf(const Graph& g, const Node& add, ValueId x)
{
    if (add.opType != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        add.outputs[0] == kNone)
        return kNone;
    const ValueId z = add.inputs[0] == x ? add.inputs[1] : add.inputs[1] == x ? add.inputs[0] : kNone;
    if (z == kNone || z == x || g.value(z).type.dtype != DataType::Float || !sameShape(g, z, x) ||
        !sameShape(g, add.outputs[0], x))
        return kNone;
    return z;
}

class FuseConvActivationPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int activations = 0, sums = 0;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& conv = g.node(id);
            if (conv.opType != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 || conv.outputs[0] == kNone)
                continue;
            const ValueId x = conv.outputs[0];
            const DataType type = g.value(x).type.dtype;
            NodeId actId = edit.soleConsumer(x);
            if (actId == kNone || (type != DataType::Float && type != DataType::Undefined))
                continue;
            // Conv -> Add (-> activation): the Add's other input becomes the summand.
            const NodeId addId = actId;
            const ValueId z = summandOf(g, g.node(addId), x);
            ValueId actInput = x;
            if (z != kNone) {
                actInput = g.node(addId).outputs[0];
                actId = edit.soleConsumer(actInput);
            }
            std::optional<FusedActivation> activation;
            if (actId != kNone && g.node(actId).input(0) == actInput)
                activation = activationOf(g, g.node(actId));
            if (!activation && z == kNone)
                continue;
            // Without an activation the fused node writes the sum itself (same name, any readers).
            const ValueId y = activation ? g.node(actId).outputs[0] : actInput;
            if (activation)
                edit.removeNode(actId);
            if (z != kNone) {
                edit.removeNode(addId);
                if (activation)
                    edit.dropIfUnused(actInput);
                if (g.node(id).inputs.size() < 3)
                    g.node(id).inputs.resize(3, kNone);
                edit.setInput(id, 3, z);
                ++stats.removed;
                ++sums;
            }
            Node& fused = g.node(id);
            makeRamielNode(fused, kFusedConv);
            if (activation) {
                addActivationAttributes(fused, *activation);
                ++stats.removed;
                ++activations;
            }
            edit.setOutput(id, 0, y);
            ++stats.fused;
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(activations) + " activations and " + std::to_string(sums) +
                       " residual Adds into convolutions";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseConvActivationPass() { return std::make_unique<FuseConvActivationPass>(); }

}  // namespace ramiel::passes
