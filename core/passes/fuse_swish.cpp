// A value times a gate of itself, y = Mul(x, Gate(x)) in either operand order, as
// exporters write the swish family out:
//   fuse-silu:      Gate = Sigmoid (torch.nn.SiLU: EfficientNet, YOLO) -> ai.ramiel.Silu
//   fuse-hardswish: Gate = HardSigmoid with alpha 1/6, beta 1/2 (torch.nn.Hardswish at
//                   opsets before 14, which have no HardSwish: MobileNetV3) -> ai.ramiel.HardSwish
// (core/ir/fused_ops.h). The runtime computes it in one pass over memory instead of
// two and the gate's tensor goes; fuse-conv-activation then takes it into the
// convolution before it. Fires only when the gate's output is read by the Mul alone.
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <cmath>
#include <functional>

namespace ramiel::passes {

namespace {

class FuseSelfGatingPass final : public Pass {
public:
    // `gate`: whether a node is the gate this pass fuses; `fused`: Ramiel's operator.
    FuseSelfGatingPass(std::function<bool(const Node&)> gate, const char* fused, std::string what)
        : gate_(std::move(gate)), fused_(fused), what_(std::move(what))
    {
    }

    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        for (NodeId gateId = 0; gateId < NodeId(g.nodeCount()); ++gateId) {
            const Node& gate = g.node(gateId);
            if (!gate.domain.empty() || !gate_(gate) || gate.outputs.size() != 1 || gate.outputs[0] == kNone)
                continue;
            const ValueId x = gate.input(0), s = gate.outputs[0];
            if (x == kNone || g.value(x).type.dtype != DataType::Float)
                continue;
            const NodeId mulId = edit.soleConsumer(s);
            if (mulId == kNone)
                continue;
            const Node& mul = g.node(mulId);
            if (mul.opType != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
                !((mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x)))
                continue;
            // The Mul becomes the fused node, in its place.
            edit.removeNode(gateId);
            edit.makeRamielUnary(mulId, fused_, x);
            edit.dropIfUnused(s);
            ++stats.fused;
            ++stats.removed;
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) + " written-out " + what_;
        return stats;
    }

private:
    std::function<bool(const Node&)> gate_;
    const char* fused_;
    std::string what_;
};

}  // namespace

std::unique_ptr<Pass> makeFuseSiluPass()
{
    return std::make_unique<FuseSelfGatingPass>([](const Node& n) { return n.opType == "Sigmoid"; }, kSilu,
                                                "SiLUs (Sigmoid, Mul)");
}

std::unique_ptr<Pass> makeFuseHardSwishPass()
{
    // PyTorch's hardsigmoid is relu6(x + 3) / 6: alpha 1/6 (exported as 0.16666667), beta 0.5.
    return std::make_unique<FuseSelfGatingPass>(
        [](const Node& n) {
            return n.opType == "HardSigmoid" && std::abs(n.attrFloat("alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
                   n.attrFloat("beta", 0.5f) == 0.5f;
        },
        kHardSwish, "HardSwishes (HardSigmoid, Mul)");
}

}  // namespace ramiel::passes
