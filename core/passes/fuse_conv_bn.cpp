// BatchNormalization folded into the preceding Conv: with
// s = scale / sqrt(var + eps) per output channel, W' = W * s and
// B' = (B - mean) * s + bias. Fires only when the Conv's output feeds the
// BatchNormalization alone and every parameter is a float constant.
#include "core/ir/batch_norm.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <cmath>
#include <cstring>

namespace ramiel::passes {

namespace {

std::optional<std::vector<float>> floatsOf(const Graph& g, ValueId v)
{
    const Tensor* t = floatConstant(g, v);
    if (!t)
        return std::nullopt;
    std::vector<float> out(size_t(t->numel()));
    std::memcpy(out.data(), t->data.data(), out.size() * sizeof(float));
    return out;
}

std::shared_ptr<const Tensor> floatTensor(const std::vector<float>& values, std::vector<int64_t> dims)
{
    auto t = std::make_shared<Tensor>();
    t->dtype = DataType::Float;
    t->dims = std::move(dims);
    t->data.resize(values.size() * sizeof(float));
    std::memcpy(t->data.data(), values.data(), t->data.size());
    return t;
}

class FuseConvBatchNormPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        const size_t count = g.nodeCount();
        for (NodeId id = 0; id < NodeId(count); ++id) {
            const Node& bn = g.node(id);
            if (edit.removed(id) || bn.opType != "BatchNormalization" || !bn.domain.empty() || bn.input(0) == kNone)
                continue;
            if (batchNormTrains(bn) || bn.attrInt("spatial", 1) != 1 || bn.opset < 6)
                continue;
            bool extraOutputsUsed = false;
            for (size_t i = 1; i < bn.outputs.size(); ++i)
                if (bn.outputs[i] != kNone &&
                    (!g.value(bn.outputs[i]).consumers.empty() || g.value(bn.outputs[i]).isGraphOutput))
                    extraOutputsUsed = true;
            const ValueId x = bn.input(0);
            const NodeId convId = g.value(x).producer;
            if (extraOutputsUsed || convId == kNone || edit.soleConsumer(x) != id)
                continue;
            const Node& conv = g.node(convId);
            if (conv.opType != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1)
                continue;
            const auto w = floatsOf(g, conv.input(1));
            const auto scale = floatsOf(g, bn.input(1)), bias = floatsOf(g, bn.input(2));
            const auto mean = floatsOf(g, bn.input(3)), var = floatsOf(g, bn.input(4));
            if (!w || !scale || !bias || !mean || !var)
                continue;
            const auto& wDims = g.value(conv.input(1)).initializer->dims;
            const size_t m = wDims.empty() ? 0 : size_t(wDims[0]);
            if (m == 0 || scale->size() != m || bias->size() != m || mean->size() != m || var->size() != m)
                continue;
            std::vector<float> b(m, 0.0f);
            if (conv.input(2) != kNone) {
                const auto given = floatsOf(g, conv.input(2));
                if (!given || given->size() != m)
                    continue;
                b = *given;
            }
            const double eps = bn.attrFloat("epsilon", 1e-5f);
            std::vector<float> w2 = *w;
            const size_t per = w2.size() / m;
            for (size_t o = 0; o < m; ++o) {
                const double s = double((*scale)[o]) / std::sqrt(double((*var)[o]) + eps);
                for (size_t k = 0; k < per; ++k)
                    w2[o * per + k] = float(double(w2[o * per + k]) * s);
                b[o] = float((double(b[o]) - double((*mean)[o])) * s + double((*bias)[o]));
            }
            const std::string base = conv.name;
            const ValueId y = bn.outputs[0];
            const std::vector<ValueId> bnOutputs = bn.outputs;
            edit.removeNode(id);
            for (size_t i = 1; i < bnOutputs.size(); ++i)
                edit.dropIfUnused(bnOutputs[i]);
            edit.setInput(convId, 1, edit.addConstant(base + ".weight_bn", floatTensor(w2, wDims)));
            edit.setInput(convId, 2, edit.addConstant(base + ".bias_bn", floatTensor(b, {int64_t(m)})));
            edit.setOutput(convId, 0, y);
            ++stats.fused;
            ++stats.removed;
        }
        edit.commit();
        stats.detail = "folded " + std::to_string(stats.fused) + " BatchNormalization nodes into convolutions";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseConvBatchNormPass() { return std::make_unique<FuseConvBatchNormPass>(); }

}  // namespace ramiel::passes
