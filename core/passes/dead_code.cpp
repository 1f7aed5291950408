// Dead-code elimination: nodes whose outputs reach no graph output, and
// initializers nobody reads (unless they are graph inputs, which callers may
// feed).
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

namespace ramiel::passes {

namespace {

class DeadCodePass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        std::vector<bool> live(g.nodeCount(), false);
        std::vector<NodeId> stack;
        auto reach = [&](ValueId v) {
            const NodeId p = v == kNone ? kNone : g.value(v).producer;
            if (p != kNone && !live[size_t(p)]) {
                live[size_t(p)] = true;
                stack.push_back(p);
            }
        };
        for (ValueId v : g.outputs())
            reach(v);
        while (!stack.empty()) {
            const Node& n = g.node(stack.back());
            stack.pop_back();
            for (ValueId v : n.inputs)
                reach(v);
            for (ValueId v : n.implicitInputs)
                reach(v);
        }

        GraphEditor edit(g);
        PassStats stats;
        for (const Node& n : g.nodes())
            if (!live[size_t(n.id)]) {
                edit.removeNode(n.id);
                ++stats.removed;
            }
        int initializers = 0;
        for (const Value& v : g.values())
            if (v.isConstant() && v.consumers.empty() && !v.isGraphInput && !v.isGraphOutput) {
                edit.dropIfUnused(v.id);
                ++initializers;
            }
        edit.commit();
        stats.detail = "removed " + std::to_string(stats.removed) + " nodes and " + std::to_string(initializers) +
                       " unused initializers";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeDeadCodePass() { return std::make_unique<DeadCodePass>(); }

}  // namespace ramiel::passes
