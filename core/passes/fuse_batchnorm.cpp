// BatchNormalization in inference form, with the Concat along channels before
// it (where the Concat's output is read by it alone) and the activation after it
// (fuse-conv-activation's list, where its output is read by that alone), becomes
// one ai.ramiel.FusedBatchNorm node (core/ir/fused_ops.h). DenseNet's layers
// each begin Concat -> BatchNormalization -> Relu on all the features before
// them: written out, the concatenation is copied once, normalized into a second
// tensor and rectified in a third pass; fused, the runtime reads each part once
// and writes the normalized, rectified result once. A BatchNormalization with
// neither neighbour to take stays as it is (fuse-conv-bn folds those after a
// convolution into its weights).
#include "core/ir/batch_norm.h"
#include "core/ir/fused_ops.h"
#include "core/passes/activations.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <optional>

namespace ramiel::passes {

namespace {

// ONNX BatchNormalization in inference form: five inputs, one output, no
// training mode or non-spatial statistics (opsets 7 and on; earlier ones had is_test).
bool isInferenceBatchNorm(const Node& n)
{
    return n.opType == "BatchNormalization" && n.domain.empty() && n.opset >= 7 && n.inputs.size() == 5 &&
           std::count(n.inputs.begin(), n.inputs.end(), kNone) == 0 && n.outputs.size() == 1 &&
           n.outputs[0] != kNone && !batchNormTrains(n) && n.attrInt("spatial", 1) == 1;
}

// The Concat's inputs, when `n` concatenates along dimension 1 and leaves none out.
std::optional<std::vector<ValueId>> partsAlongChannels(const Graph& g, const Node& n)
{
    if (n.opType != "Concat" || !n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1 ||
        std::count(n.inputs.begin(), n.inputs.end(), kNone) != 0)
        return std::nullopt;
    int64_t axis = n.attrInt("axis", 1);  // before opset 4 the default was 1
    if (axis < 0) {
        const auto& shape = g.value(n.outputs[0]).type.shape;
        if (!shape)
            return std::nullopt;
        axis += int64_t(shape->rank());
    }
    if (axis != 1)
        return std::nullopt;
    return n.inputs;
}

class FuseBatchNormPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int concats = 0, activations = 0;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            if (edit.removed(id) || !isInferenceBatchNorm(g.node(id)))
                continue;
            const ValueId x = g.node(id).inputs[0], y = g.node(id).outputs[0];
            const DataType type = g.value(y).type.dtype;
            if (type != DataType::Float && type != DataType::Undefined)
                continue;
            const NodeId concatId = g.value(x).producer;
            std::optional<std::vector<ValueId>> parts;
            if (concatId != kNone && !edit.removed(concatId) && edit.soleConsumer(x) == id)
                parts = partsAlongChannels(g, g.node(concatId));
            const NodeId actId = edit.soleConsumer(y);
            std::optional<FusedActivation> activation;
            if (actId != kNone && g.node(actId).input(0) == y)
                activation = activationOf(g, g.node(actId));
            if (!parts && !activation)
                continue;

            std::vector<ValueId> inputs = parts ? *parts : std::vector<ValueId>{x};
            inputs.insert(inputs.end(), g.node(id).inputs.begin() + 1, g.node(id).inputs.end());
            if (parts) {
                edit.removeNode(concatId);
                ++stats.removed;
                ++concats;
            }
            if (activation) {
                const ValueId z = g.node(actId).outputs[0];
                edit.removeNode(actId);
                edit.setOutput(id, 0, z);
                ++stats.removed;
                ++activations;
            }
            const size_t oldInputs = g.node(id).inputs.size();
            for (size_t i = 0; i < std::max(oldInputs, inputs.size()); ++i)
                edit.setInput(id, i, i < inputs.size() ? inputs[i] : kNone);
            edit.dropIfUnused(x);
            edit.dropIfUnused(y);
            Node& fused = g.node(id);
            fused.inputs.resize(inputs.size());
            const float epsilon = fused.attrFloat("epsilon", 1e-5f);
            makeRamielNode(fused, kFusedBatchNorm);
            fused.attributes = {Attribute::ofFloat("epsilon", epsilon)};
            if (activation)
                addActivationAttributes(fused, *activation);
            ++stats.fused;
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) + " batch normalizations, " + std::to_string(concats) +
                       " with their Concat, " + std::to_string(activations) + " with their activation";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseBatchNormPass() { return std::make_unique<FuseBatchNormPass>(); }

}  // namespace ramiel::passes
