// Group normalization as PyTorch exports F.group_norm (ONNX has no operator for it
// before opset 18):
//   v = Reshape(x, [0, G, -1])                 each image's G groups as rows
//   n = InstanceNormalization(v, s, b, eps)    s, b: G values (PyTorch writes ones, zeros)
//   u = Reshape(n, x's shape)                  a constant, or Shape(x)
//   y = u · w + β                              w, β: one value per channel ([C, 1, 1])
// then often an activation (FCOS's heads: Relu; diffusion models: SiLU). The chain
// becomes one ai.ramiel.FusedGroupNorm node (core/ir/fused_ops.h) with scale w·s and
// bias β + w·b per channel: the runtime reads x twice (statistics, then the normalized,
// scaled, activated result) where written out the two Reshapes copy it from and back to
// the convolutions' channels-last layout and the affine steps and the activation each
// take a pass. Fires only on float x of known channels, a batch left to the input (a
// leading 0: a batch written as a number would normalize other batches across images),
// and every intermediate value read by the next step alone; the Mul, the Add and the
// activation are each optional.
#include "core/ir/fused_ops.h"
#include "core/passes/activations.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <cmath>
#include <string>

namespace ramiel::passes {

namespace {

// x's sizes when it is float of rank >= 3 with its channels known (the rest may be unknown: -1).
std::optional<std::vector<int64_t>> groupableInput(const Graph& g, ValueId x)
{
    const TensorType& t = g.value(x).type;
    if (t.dtype != DataType::Float || !t.shape || t.shape->rank() < 3 || !t.shape->dims[1].isKnown() ||
        t.shape->dims[1].value < 1)
        return std::nullopt;
    std::vector<int64_t> sizes;
    for (const Dim& d : t.shape->dims)
        sizes.push_back(d.value);
    return sizes;
}

// The group count of the first Reshape's constant target [0, G, -1] (or [0, G, L] with L
// the group's known size), when G divides the channels; 0 otherwise.
int64_t groupsOf(const Graph& g, const Node& reshape, const std::vector<int64_t>& x)
{
    const ValueId s = reshape.input(1);
    if (reshape.inputs.size() != 2 || s == kNone || !g.value(s).isConstant() || reshape.attrInt("allowzero", 0) != 0)
        return 0;
    const auto target = g.value(s).initializer->toInt64s();
    if (!target || target->size() != 3 || (*target)[0] != 0)
        return 0;
    const int64_t groups = (*target)[1], channels = x[1];
    if (groups < 1 || channels % groups)
        return 0;
    if ((*target)[2] == -1)
        return groups;
    int64_t length = channels / groups;
    for (size_t i = 2; i < x.size(); ++i) {
        if (x[i] < 0 || __builtin_mul_overflow(length, x[i], &length))
            return 0;
    }
    return (*target)[2] == length ? groups : 0;
}

// True when the second Reshape gives back x's shape: its target is x's own sizes (the
// batch's may be 0 or -1, as fold-constants leaves it) or Shape(x).
bool restoresShape(const Graph& g, const Node& reshape, ValueId x, const std::vector<int64_t>& sizes)
{
    const ValueId s = reshape.input(1);
    if (reshape.inputs.size() != 2 || s == kNone)
        return false;
    if (g.value(s).isConstant()) {
        const auto target = g.value(s).initializer->toInt64s();
        if (!target || target->size() != sizes.size() || reshape.attrInt("allowzero", 0) != 0)
            return false;
        for (size_t i = 0; i < sizes.size(); ++i)
            if ((*target)[i] != sizes[i] && !(i == 0 && ((*target)[i] == 0 || (*target)[i] == -1)))
                return false;
        return sizes[0] >= 0 || (*target)[0] <= 0;
    }
    const NodeId p = g.value(s).producer;
    if (p == kNone)
        return false;
    const Node& shape = g.node(p);
    return shape.opType == "Shape" && shape.domain.empty() && shape.input(0) == x && !shape.attr("start") &&
           !shape.attr("end");
}

// The values of a float constant of rank 1 and `count` values.
std::optional<std::vector<double>> floatVector(const Graph& g, ValueId v, int64_t count)
{
    const Tensor* t = floatConstant(g, v);
    if (!t || t->dims != std::vector<int64_t>{count})
        return std::nullopt;
    return t->toDoubles();
}

// The `channels` values of a float constant that, broadcast against an input of `rank`
// dimensions (N, C, ...), holds one value per channel or one for all: right-aligned,
// its sizes are 1 everywhere but at the channels'. Nullopt for any other.
std::optional<std::vector<double>> perChannel(const Graph& g, ValueId v, size_t rank, int64_t channels)
{
    const Tensor* t = floatConstant(g, v);
    if (!t || t->dims.size() > rank)
        return std::nullopt;
    const size_t channelFromLast = rank - 2;
    for (size_t i = 0; i < t->dims.size(); ++i) {
        const size_t fromLast = t->dims.size() - 1 - i;
        if (t->dims[i] != 1 && !(fromLast == channelFromLast && t->dims[i] == channels))
            return std::nullopt;
    }
    auto values = t->toDoubles();
    if (values && values->size() == 1)
        values->assign(size_t(channels), (*values)[0]);
    return values;
}

// The fused node's name: the normalization's with its last part "InstanceNormalization"
// (PyTorch's, "/head/conv.1/InstanceNormalization") made "GroupNorm", so that the generated
// code's variable says what it holds; the name as it was if another node has that one.
std::string groupNormName(const Graph& g, const std::string& name)
{
    const std::string part = "InstanceNormalization";
    if (name.size() < part.size() || name.compare(name.size() - part.size(), part.size(), part) != 0)
        return name;
    const std::string renamed = name.substr(0, name.size() - part.size()) + "GroupNorm";
    for (const Node& n : g.nodes())
        if (n.name == renamed)
            return name;
    return renamed;
}

class FuseGroupNormPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int affine = 0, activations = 0;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& norm = g.node(id);
            if (edit.removed(id) || norm.opType != "InstanceNormalization" || !norm.domain.empty() ||
                norm.inputs.size() != 3 || norm.outputs.size() != 1 || norm.outputs[0] == kNone)
                continue;
            // x -> Reshape [0, G, -1] -> this normalization.
            const ValueId rows = norm.input(0);
            const NodeId splitId = rows == kNone ? kNone : g.value(rows).producer;
            if (splitId == kNone || edit.removed(splitId) || edit.soleConsumer(rows) != id)
                continue;
            const Node& split = g.node(splitId);
            if (split.opType != "Reshape" || !split.domain.empty())
                continue;
            const ValueId x = split.input(0);
            const auto sizes = x == kNone ? std::nullopt : groupableInput(g, x);
            const int64_t groups = sizes ? groupsOf(g, split, *sizes) : 0;
            if (!groups)
                continue;
            const int64_t channels = (*sizes)[1];
            const auto s = floatVector(g, norm.input(1), groups);
            const auto b = floatVector(g, norm.input(2), groups);
            const float epsilon = norm.attrFloat("epsilon", 1e-5f);
            if (!s || !b || !(epsilon >= 0.0f) || !std::isfinite(epsilon))
                continue;
            // -> Reshape back to x's shape.
            const Node* merge = soleReader(edit, norm.outputs[0], "Reshape");
            if (!merge || merge->input(0) != norm.outputs[0] || !restoresShape(g, *merge, x, *sizes))
                continue;
            // -> Mul by w, Add of β (each optional), per channel.
            std::vector<NodeId> gone{splitId, merge->id};
            ValueId y = merge->outputs[0];
            std::vector<double> w(size_t(channels), 1.0), beta(size_t(channels), 0.0);
            if (const Node* mul = soleReader(edit, y, "Mul")) {
                if (const auto values = perChannel(g, otherOperand(*mul, y), sizes->size(), channels)) {
                    w = *values;
                    gone.push_back(mul->id);
                    y = mul->outputs[0];
                }
            }
            if (const Node* add = soleReader(edit, y, "Add")) {
                if (const auto values = perChannel(g, otherOperand(*add, y), sizes->size(), channels)) {
                    beta = *values;
                    gone.push_back(add->id);
                    y = add->outputs[0];
                }
            }
            affine += gone.size() > 2;
            const NodeId actId = edit.soleConsumer(y);
            std::optional<FusedActivation> activation;
            if (actId != kNone && g.node(actId).input(0) == y)
                activation = activationOf(g, g.node(actId));
            if (activation) {
                gone.push_back(actId);
                y = g.node(actId).outputs[0];
                ++activations;
            }
            // Shape(x), when the second Reshape was its only reader.
            const ValueId target = merge->input(1);
            const NodeId shapeId = g.value(target).producer;
            if (shapeId != kNone && edit.soleConsumer(target) == merge->id)
                gone.push_back(shapeId);

            std::vector<float> scale(static_cast<size_t>(channels)), bias(static_cast<size_t>(channels));
            const int64_t perGroup = channels / groups;
            for (int64_t c = 0; c < channels; ++c) {
                const size_t k = size_t(c / perGroup), i = size_t(c);
                scale[i] = float((*s)[k] * w[i]);
                bias[i] = float(beta[i] + (*b)[k] * w[i]);
            }
            const std::string name = groupNormName(g, norm.name);
            const ValueId scaleId = edit.addConstant(name + "_scale", tensorFrom(DataType::Float, scale, {channels}));
            const ValueId biasId = edit.addConstant(name + "_bias", tensorFrom(DataType::Float, bias, {channels}));
            const std::vector<ValueId> oldInputs = {rows, norm.input(1), norm.input(2)};
            for (NodeId n : gone) {
                for (ValueId v : g.node(n).inputs)
                    edit.dropIfUnused(v);
                for (ValueId v : g.node(n).outputs)
                    edit.dropIfUnused(v);
                edit.removeNode(n);
            }
            edit.setInput(id, 0, x);
            edit.setInput(id, 1, scaleId);
            edit.setInput(id, 2, biasId);
            for (ValueId v : oldInputs)
                edit.dropIfUnused(v);
            const ValueId normalized = g.node(id).outputs[0];
            edit.setOutput(id, 0, y);
            edit.dropIfUnused(normalized);
            Node& fused = g.node(id);
            fused.name = name;
            makeRamielNode(fused, kFusedGroupNorm);
            fused.attributes = {Attribute::ofInt("num_groups", groups), Attribute::ofFloat("epsilon", epsilon)};
            if (activation)
                addActivationAttributes(fused, *activation);
            ++stats.fused;
            stats.removed += int(gone.size());
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) +
                       " written-out group normalizations (Reshape, InstanceNormalization, Reshape), " +
                       std::to_string(affine) + " with their Mul/Add, " + std::to_string(activations) +
                       " with their activation";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseGroupNormPass() { return std::make_unique<FuseGroupNormPass>(); }

}  // namespace ramiel::passes
