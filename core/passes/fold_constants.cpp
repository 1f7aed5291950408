// Constant propagation and folding: every node whose inputs are all constant
// is evaluated once and its outputs become initializers. Constant nodes and
// shape arithmetic (Shape of a statically known shape, Gather from it) fold
// here directly; the rest runs on the runtime's own kernels (one compiled
// sub-model holding every foldable node), so folding computes exactly what
// execution would.
#include "core/ir/topology.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace ramiel::passes {

namespace {

constexpr int64_t kMaxFoldedBytes = int64_t(16) << 20;

std::shared_ptr<Tensor> int64Tensor(const std::vector<int64_t>& values, std::vector<int64_t> dims)
{
    return tensorFrom(DataType::Int64, values, std::move(dims));
}

// The value of a Constant node, when its attribute is a numeric one.
std::shared_ptr<const Tensor> constantValue(const Node& n)
{
    for (const Attribute& a : n.attributes) {
        if (a.name == "value" && a.kind == Attribute::Kind::Tensor && a.t && a.t->hasData() &&
            a.t->dtype != DataType::String)
            return a.t;
        if (a.name == "value_float" && a.kind == Attribute::Kind::Float)
            return tensorFrom(DataType::Float, std::vector<float>{a.f}, {});
        if (a.name == "value_floats" && a.kind == Attribute::Kind::Floats)
            return tensorFrom(DataType::Float, a.floats, {int64_t(a.floats.size())});
        if (a.name == "value_int" && a.kind == Attribute::Kind::Int)
            return int64Tensor({a.i}, {});
        if (a.name == "value_ints" && a.kind == Attribute::Kind::Ints)
            return int64Tensor(a.ints, {int64_t(a.ints.size())});
    }
    return nullptr;
}

// Shape's [start, end) over a rank-r input (opset 15 added them).
std::pair<int64_t, int64_t> shapeRange(const Node& n, int64_t rank)
{
    auto clampAxis = [rank](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
    const int64_t start = clampAxis(n.attrInt("start", 0));
    const Attribute* endAttr = n.attr("end");
    const int64_t end = endAttr ? clampAxis(endAttr->i) : rank;
    return {start, std::max(start, end)};
}

class FoldConstantsPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext& context) override
    {
        Graph& g = model.graph;
        const Topology topo = buildTopology(g);
        GraphEditor edit(g);
        PassStats stats;

        // Results known now, by value id (initializers and what folds natively).
        std::vector<std::shared_ptr<const Tensor>> known(g.valueCount());
        for (const Value& v : g.values())
            known[size_t(v.id)] = v.initializer;
        // Nodes left to the runtime, in topological order; their outputs count as constant.
        std::vector<bool> viaRuntime(g.nodeCount(), false);
        std::vector<bool> pending(g.valueCount(), false);
        std::vector<NodeId> runtimeNodes;
        std::set<std::string> supported;
        bool supportedLoaded = false;
        int native = 0;

        auto isConstant = [&](ValueId v) { return v == kNone || known[size_t(v)] || pending[size_t(v)]; };
        auto producesOutput = [&](const Node& n) {
            for (ValueId v : n.outputs)
                if (v != kNone && (g.value(v).isGraphOutput || edit.readBySubgraph(v)))
                    return true;
            return false;
        };

        for (NodeId id : topo.order) {
            const Node& n = g.node(id);
            if (!n.domain.empty() || n.hasSubgraphs() || !n.implicitInputs.empty() || n.outputs.empty() ||
                producesOutput(n))
                continue;
            // Native folds: Constant, and shape sizes known from shape inference.
            if (auto t = nativeFold(g, n, known, context); t) {
                known[size_t(n.outputs[0])] = t;
                ++native;
                continue;
            }
            bool allConstant = true;
            for (ValueId v : n.inputs)
                allConstant = allConstant && isConstant(v);
            if (!allConstant || n.opType == "Constant" || n.opType == "Shape" || !context.useRuntime)
                continue;
            if (!supportedLoaded) {
                const auto ops = runtime().supportedOperators();
                supported.insert(ops.begin(), ops.end());
                supportedLoaded = true;
            }
            if (!supported.count(n.opType))
                continue;
            viaRuntime[size_t(id)] = true;
            runtimeNodes.push_back(id);
            for (ValueId v : n.outputs)
                if (v != kNone)
                    pending[size_t(v)] = true;
        }

        std::string skipped;
        int tooLarge = 0;
        if (!runtimeNodes.empty()) {
            try {
                evaluate(model, runtimeNodes, viaRuntime, known);
                // A result much larger than what it is computed from stays a computation:
                // folding it would bloat the model (ConstantOfShape, Expand, Tile, Range).
                for (NodeId id : runtimeNodes) {
                    const Node& n = g.node(id);
                    int64_t in = 0, out = 0;
                    for (ValueId v : n.inputs)
                        if (v != kNone && known[size_t(v)])
                            in += int64_t(known[size_t(v)]->data.size());
                    for (ValueId v : n.outputs)
                        if (v != kNone && known[size_t(v)])
                            out += int64_t(known[size_t(v)]->data.size());
                    if (out > kMaxFoldedBytes && out > in) {
                        for (ValueId v : n.outputs)
                            if (v != kNone)
                                known[size_t(v)] = nullptr;
                        ++tooLarge;
                    }
                }
            } catch (const Error& e) {
                // Folding is an optimization: a node the runtime cannot evaluate stays a node.
                for (NodeId id : runtimeNodes)
                    for (ValueId v : g.node(id).outputs)
                        if (v != kNone)
                            known[size_t(v)] = nullptr;
                skipped = "; " + std::to_string(runtimeNodes.size()) +
                          " nodes left unfolded, the runtime could not evaluate them: " + e.message();
            }
        }

        // Replace every folded node: its outputs become initializers (those
        // still read), and the node goes.
        for (const Node& n : g.nodes()) {
            bool folded = n.outputs.size() > 0 && n.outputs[0] != kNone && known[size_t(n.outputs[0])] &&
                          !g.value(n.outputs[0]).isConstant();
            if (!folded)
                continue;
            const std::vector<ValueId> outs = n.outputs;
            edit.removeNode(n.id);
            ++stats.removed;
            for (ValueId v : outs) {
                if (v == kNone || !known[size_t(v)])
                    continue;
                g.setInitializer(v, known[size_t(v)]);
                g.value(v).type = known[size_t(v)]->type();
                edit.dropIfUnused(v);
            }
        }
        edit.commit();  // initializers only folded nodes read go with them
        stats.detail = "folded " + std::to_string(stats.removed) + " nodes (" + std::to_string(native) +
                       " without the runtime)" + skipped;
        if (tooLarge)
            stats.detail += "; " + std::to_string(tooLarge) + " nodes left unfolded: their results exceed " +
                            std::to_string(kMaxFoldedBytes >> 20) + " MiB";
        return stats;
    }

private:
    // Folds Constant, Shape of a known shape and Gather from such a Shape
    // without running anything; null when the node is not one of those.
    static std::shared_ptr<const Tensor> nativeFold(const Graph& g, const Node& n,
                                                    const std::vector<std::shared_ptr<const Tensor>>& known,
                                                    const PassContext& context)
    {
        if (n.opType == "Constant" && n.inputs.empty())
            return constantValue(n);
        if (n.opType == "Shape" && n.input(0) != kNone) {
            const auto& shape = g.value(n.input(0)).type.shape;
            if (!shape || !shape->isFullyKnown())
                return nullptr;
            const auto sizes = *shape->sizes();
            const auto [start, end] = shapeRange(n, int64_t(sizes.size()));
            if (context.batchDynamic && start == 0 && end > 0 && !g.value(n.input(0)).isConstant())
                return nullptr;  // would bake the batch size in
            std::vector<int64_t> part(sizes.begin() + start, sizes.begin() + end);
            return int64Tensor(part, {int64_t(part.size())});
        }
        if (n.opType == "Gather" && n.input(0) != kNone && n.input(1) != kNone && n.attrInt("axis", 0) == 0) {
            // Sizes picked out of a Shape whose input's sizes are known, the batch not among them.
            const ValueId data = n.input(0);
            const NodeId p = g.value(data).producer;
            const auto& indices = known[size_t(n.input(1))];
            if (p == kNone || g.node(p).opType != "Shape" || !indices || known[size_t(data)])
                return nullptr;
            const Node& shapeNode = g.node(p);
            const auto& shape = g.value(shapeNode.input(0)).type.shape;
            const auto idx = indices->toInt64s();
            if (!shape || !shape->isFullyKnown() || !idx)
                return nullptr;
            const auto sizes = *shape->sizes();
            const auto [start, end] = shapeRange(shapeNode, int64_t(sizes.size()));
            std::vector<int64_t> picked;
            for (int64_t i : *idx) {
                const int64_t count = end - start;
                if (i < -count || i >= count)
                    return nullptr;
                const int64_t axis = start + (i < 0 ? i + count : i);
                if (context.batchDynamic && axis == 0)
                    return nullptr;
                picked.push_back(sizes[size_t(axis)]);
            }
            return int64Tensor(picked, indices->dims);
        }
        return nullptr;
    }

    // Runs the listed nodes on the runtime as one model whose outputs are
    // every value they produce, and stores the results in `known`.
    static void evaluate(const Model& model, const std::vector<NodeId>& nodes, const std::vector<bool>& selected,
                         std::vector<std::shared_ptr<const Tensor>>& known)
    {
        const Graph& g = model.graph;
        Model sub;
        sub.path = model.path;
        sub.irVersion = model.irVersion;
        sub.opsets = model.opsets;
        std::vector<ValueId> map(g.valueCount(), kNone);
        auto bring = [&](ValueId v) -> ValueId {
            if (v == kNone)
                return kNone;
            if (map[size_t(v)] == kNone) {
                map[size_t(v)] = sub.graph.addValue(g.value(v).name, g.value(v).type);
                if (known[size_t(v)] && g.value(v).producer == kNone)
                    sub.graph.setInitializer(map[size_t(v)], known[size_t(v)]);
                else if (known[size_t(v)] && !selected[size_t(g.value(v).producer)])
                    sub.graph.setInitializer(map[size_t(v)], known[size_t(v)]);  // folded natively
            }
            return map[size_t(v)];
        };
        std::vector<ValueId> produced;
        for (NodeId id : nodes) {
            Node copy = g.node(id);
            copy.id = kNone;
            for (ValueId& v : copy.inputs)
                v = bring(v);
            for (ValueId& v : copy.outputs) {
                if (v != kNone)
                    produced.push_back(v);
                v = bring(v);
            }
            sub.graph.addNode(std::move(copy));
        }
        for (ValueId v : produced)
            sub.graph.addOutput(map[size_t(v)]);
        auto compiled = runtime().compile(sub);
        compiled->setInputs({});
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> results = compiled->outputs();
        for (size_t i = 0; i < produced.size(); ++i)
            known[size_t(produced[i])] = std::make_shared<const Tensor>(results[i]);
    }
};

}  // namespace

std::unique_ptr<Pass> makeFoldConstantsPass() { return std::make_unique<FoldConstantsPass>(); }

}  // namespace ramiel::passes
