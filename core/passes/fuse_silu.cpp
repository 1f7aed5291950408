// SiLU (swish) written out, y = Mul(x, Sigmoid(x)) in either operand order, as
// exporters write torch.nn.SiLU (EfficientNet, MnasNet's relatives, YOLO),
// becomes one ai.ramiel.Silu node (core/ir/fused_ops.h): the runtime computes it
// with ATen's SiLU in one pass over memory instead of two, and the Sigmoid's
// tensor goes. Fires only when the Sigmoid's output is read by the Mul alone.
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

namespace ramiel::passes {

namespace {

class FuseSiluPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        for (NodeId sigId = 0; sigId < NodeId(g.nodeCount()); ++sigId) {
            const Node& sig = g.node(sigId);
            if (sig.opType != "Sigmoid" || !sig.domain.empty() || sig.outputs.size() != 1 || sig.outputs[0] == kNone)
                continue;
            const ValueId x = sig.input(0), s = sig.outputs[0];
            if (x == kNone || g.value(x).type.dtype != DataType::Float)
                continue;
            const NodeId mulId = edit.soleConsumer(s);
            if (mulId == kNone)
                continue;
            const Node& mul = g.node(mulId);
            if (mul.opType != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
                !((mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x)))
                continue;
            // The Mul becomes the Silu, in its place.
            edit.removeNode(sigId);
            edit.makeRamielUnary(mulId, kSilu, x);
            edit.dropIfUnused(s);
            ++stats.fused;
            ++stats.removed;
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) + " written-out SiLUs (Sigmoid, Mul)";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseSiluPass() { return std::make_unique<FuseSiluPass>(); }

}  // namespace ramiel::passes
