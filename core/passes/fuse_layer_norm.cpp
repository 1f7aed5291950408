// Layer normalization written out, as PyTorch exports F.layer_norm before ONNX
// opset 17 (torch 1.13's default export is opset 14):
//   mean = ReduceMean(x, axes)          axes: the last k dimensions, keepdims
//   d    = Sub(x, mean)
//   var  = ReduceMean(Pow(d, 2), axes)
//   y    = Div(d, Sqrt(Add(var, eps))) · scale (+ bias)    scale, bias: constants of rank k
// becomes one ai.ramiel LayerNormalization node (core/ir/fused_ops.h): ATen's
// fused kernel, one pass over each row, instead of eight or nine nodes and
// their tensors (convnext_tiny at opset 13 has 23 of them). Fires only when
// every intermediate value is read by the next step alone (d by the Pow and
// the Div).
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <cmath>

namespace ramiel::passes {

namespace {

// The number k of trailing dimensions a ReduceMean averages over, keeping them,
// when its axes are exactly the last k of its input; 0 otherwise.
int64_t trailingAxes(const Graph& g, const Node& mean)
{
    if (mean.attrInt("keepdims", 1) != 1 || mean.input(0) == kNone)
        return 0;
    std::vector<int64_t> axes;
    if (mean.opset >= 18) {
        const ValueId a = mean.input(1);
        const Tensor* t = a == kNone || !g.value(a).isConstant() ? nullptr : g.value(a).initializer.get();
        const auto ints = t ? t->toInt64s() : std::nullopt;
        if (!ints)
            return 0;
        axes = *ints;
    } else {
        if (!mean.attr("axes"))
            return 0;
        axes = mean.attrInts("axes");
    }
    const auto& shape = g.value(mean.input(0)).type.shape;
    const int64_t rank = shape ? int64_t(shape->rank()) : -1;
    for (int64_t& a : axes) {
        if (a >= 0 && rank < 0)
            return 0;
        if (a >= 0)
            a -= rank;
    }
    std::sort(axes.begin(), axes.end());
    const int64_t k = int64_t(axes.size());
    for (int64_t i = 0; i < k; ++i)
        if (axes[size_t(i)] != i - k)
            return 0;
    return rank >= 0 && k > rank ? 0 : k;
}

// The same axes, read the same way, on both ReduceMeans.
bool sameAxes(const Node& a, const Node& b)
{
    if (a.opset >= 18 || b.opset >= 18)
        return a.opset == b.opset && a.input(1) == b.input(1);
    return a.attrInts("axes") == b.attrInts("axes");
}

// `v` as a float constant of rank k, or nullptr.
const Tensor* affine(const Graph& g, ValueId v, int64_t k)
{
    const Tensor* t = floatConstant(g, v);
    return t && int64_t(t->dims.size()) == k ? t : nullptr;
}

class FuseLayerNormPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        for (NodeId meanId = 0; meanId < NodeId(g.nodeCount()); ++meanId) {
            const Node& mean = g.node(meanId);
            if (edit.removed(meanId) || mean.opType != "ReduceMean" || !mean.domain.empty() ||
                mean.outputs.size() != 1 || mean.outputs[0] == kNone)
                continue;
            const ValueId x = mean.input(0);
            const int64_t k = trailingAxes(g, mean);
            if (k == 0 || g.value(x).type.dtype != DataType::Float)
                continue;
            // x - mean, read by the Pow and the Div only.
            const Node* sub = soleReader(edit, mean.outputs[0], "Sub");
            if (!sub || sub->inputs.size() != 2 || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0])
                continue;
            const ValueId d = sub->outputs[0];
            const Value& dv = g.value(d);
            if (dv.isGraphOutput || edit.readBySubgraph(d) || dv.consumers.size() != 2)
                continue;
            const Node* pow = nullptr;
            const Node* div = nullptr;
            for (NodeId c : dv.consumers) {
                const Node& n = g.node(c);
                if (n.opType == "Pow" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] == d)
                    pow = &n;
                else if (n.opType == "Div" && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] == d)
                    div = &n;
            }
            if (!pow || !div || pow->outputs.size() != 1 || div->outputs.size() != 1)
                continue;
            const std::optional<float> two = floatScalar(g, pow->inputs[1]);
            if (!two || *two != 2.0f)
                continue;
            // mean of the squares, + eps, square root, the Div's denominator.
            const Node* variance = soleReader(edit, pow->outputs[0], "ReduceMean");
            if (!variance || variance->input(0) != pow->outputs[0] || trailingAxes(g, *variance) != k ||
                !sameAxes(mean, *variance))
                continue;
            const Node* plusEps = soleReader(edit, variance->outputs[0], "Add");
            const std::optional<float> eps =
                plusEps ? floatScalar(g, otherOperand(*plusEps, variance->outputs[0])) : std::nullopt;
            if (!eps || !(*eps >= 0.0f) || !std::isfinite(*eps))
                continue;
            const Node* sqrt = soleReader(edit, plusEps->outputs[0], "Sqrt");
            if (!sqrt || edit.soleConsumer(sqrt->outputs[0]) != div->id || div->inputs[1] != sqrt->outputs[0])
                continue;
            // · scale (+ bias).
            const Node* scale = soleReader(edit, div->outputs[0], "Mul");
            const ValueId w = scale ? otherOperand(*scale, div->outputs[0]) : kNone;
            const Tensor* wt = affine(g, w, k);
            if (!wt)
                continue;
            const Node* shift = soleReader(edit, scale->outputs[0], "Add");
            const ValueId b = shift ? otherOperand(*shift, scale->outputs[0]) : kNone;
            const Tensor* bt = affine(g, b, k);
            if (bt && bt->dims != wt->dims)
                continue;
            const NodeId last = bt ? shift->id : scale->id;
            std::vector<NodeId> gone{meanId, sub->id, pow->id, variance->id, plusEps->id, sqrt->id, div->id};
            if (bt)
                gone.push_back(scale->id);
            for (NodeId n : gone)
                edit.removeNode(n);
            // The last step becomes the LayerNormalization, in its place.
            edit.setInput(last, 0, x);
            edit.setInput(last, 1, w);
            if (bt)
                edit.setInput(last, 2, b);
            Node& fused = g.node(last);
            makeRamielNode(fused, kLayerNorm);
            fused.attributes = {Attribute::ofInt("axis", -k), Attribute::ofFloat("epsilon", *eps)};
            ++stats.fused;
            stats.removed += int(gone.size());
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) +
                       " written-out layer normalizations (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add)";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseLayerNormPass() { return std::make_unique<FuseLayerNormPass>(); }

}  // namespace ramiel::passes
