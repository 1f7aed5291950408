// Identity elimination: nodes whose output equals their first input.
// Identity; Dropout at inference (no mask read); Reshape to the same shape;
// Transpose by the identity permutation; Cast to the type it already has.
#include "core/ir/cast_target.h"
#include "core/ir/dropout.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

namespace ramiel::passes {

namespace {

// Input i's tensor when it is constant: an initializer, or a Constant node's
// value (this pass runs before folding turns those into initializers; exporters
// write Dropout's ratio and training_mode as Constant nodes).
const Tensor* constantInput(const Graph& g, const Node& n, size_t i)
{
    const ValueId v = n.input(i);
    if (v == kNone)
        return nullptr;
    const Value& value = g.value(v);
    if (value.isConstant())
        return value.initializer.get();
    if (value.producer == kNone)
        return nullptr;
    const Node& p = g.node(value.producer);
    const Attribute* t = p.opType == "Constant" && p.domain.empty() ? p.attr("value") : nullptr;
    return t && t->kind == Attribute::Kind::Tensor ? t->t.get() : nullptr;
}

std::optional<std::vector<int64_t>> constantInts(const Graph& g, const Node& n, size_t i)
{
    const Tensor* t = constantInput(g, n, i);
    return t ? t->toInt64s() : std::nullopt;
}

bool isNoOp(const Graph& g, const Node& n)
{
    if (!n.domain.empty() || n.inputs.empty() || n.input(0) == kNone || n.outputs.empty() || n.outputs[0] == kNone)
        return false;
    const Value& in = g.value(n.input(0));
    const Value& out = g.value(n.outputs[0]);
    if (n.opType == "Identity")
        return n.outputs.size() == 1;
    if (n.opType == "Dropout") {
        // The mask output must be unused; training mode must be off.
        if (n.outputs.size() > 1 && n.outputs[1] != kNone) {
            const Value& mask = g.value(n.outputs[1]);
            if (!mask.consumers.empty() || mask.isGraphOutput)
                return false;
        }
        // Training mode with a ratio of 0 drops nothing and scales by 1 (torchvision's
        // swin_t exports its attention dropout so).
        return dropoutMode(n, [&](size_t i) { return constantInput(g, n, i); }).dropsNothing();
    }
    if (n.opType == "Cast")
        return in.type.dtype != DataType::Undefined && in.type.dtype == castTarget(n);
    if (n.opType == "Transpose") {
        const auto perm = n.attrInts("perm");
        if (perm.empty())  // the default reverses the dimensions: a no-op for rank <= 1
            return in.type.shape && in.type.shape->rank() <= 1;
        for (size_t i = 0; i < perm.size(); ++i)
            if (perm[i] != int64_t(i))
                return false;
        return true;
    }
    if (n.opType == "Reshape") {
        // The target must keep the input's shape for any batch: every entry is
        // 0 (copy) or the input's own size, and the first is 0 or -1 when the
        // batch dimension may change.
        const auto target = constantInts(g, n, 1);
        if (!target || !in.type.shape || !in.type.shape->isFullyKnown() || !out.type.shape ||
            !(*out.type.shape == *in.type.shape))
            return false;
        const auto sizes = *in.type.shape->sizes();
        if (target->size() != sizes.size())
            return false;
        const bool allowZero = n.attrInt("allowzero", 0) != 0;
        int minusOnes = 0;
        for (size_t i = 0; i < sizes.size(); ++i) {
            const int64_t t = (*target)[i];
            if (t == -1)
                ++minusOnes;
            else if (t == 0 && !allowZero)
                continue;
            else if (i == 0 || t != sizes[i])
                return false;  // a fixed first size would not follow a larger batch
        }
        return minusOnes == 0 || (minusOnes == 1 && (*target)[0] == -1);
    }
    return false;
}

class EliminateIdentityPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int kept = 0;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& n = g.node(id);
            if (!isNoOp(g, n))
                continue;
            const ValueId x = n.input(0), y = n.outputs[0];
            if (edit.readBySubgraph(y) || edit.readBySubgraph(x)) {
                ++kept;
                continue;
            }
            if (!g.value(y).isGraphOutput) {
                edit.removeNode(id);
                edit.replaceUses(y, x);
            } else {
                // y is a graph output and keeps its name: x's producer writes y
                // directly. Impossible when x is itself an input, a constant or
                // an output (the graph would lose a name it exposes).
                const Value& xv = g.value(x);
                if (xv.producer == kNone || xv.isGraphInput || xv.isGraphOutput || xv.isConstant()) {
                    ++kept;
                    continue;
                }
                edit.removeNode(id);
                edit.mergeInto(x, y);
            }
            for (size_t i = 1; i < n.outputs.size(); ++i)
                edit.dropIfUnused(n.outputs[i]);
            ++stats.removed;
        }
        edit.commit();
        stats.detail = "removed " + std::to_string(stats.removed) + " pass-through nodes";
        if (kept)
            stats.detail += ", kept " + std::to_string(kept) + " that connect graph inputs, outputs or constants";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeEliminateIdentityPass() { return std::make_unique<EliminateIdentityPass>(); }

}  // namespace ramiel::passes
