// A Pad of zeros in front of a Conv or an AveragePool becomes the consumer's
// own pads: the padded copy of the activation is never made. Conv pads with
// zeros itself; an AveragePool without pads of its own that counts the padded
// cells (count_include_pad = 1) divides as it would over the padded copy. A Pad
// whose pads are all zero is dropped whatever reads it. Fires only where the
// Pad's output is not a graph output, and (except for a zero Pad) feeds the
// consumer alone.
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <optional>

namespace ramiel::passes {

namespace {

// The spatial pads ([x1_begin, x2_begin, ..., x1_end, ...], batch and channel
// dimensions left out) of a constant-mode Pad of zeros on all dimensions; nullopt
// for any other Pad.
std::optional<std::vector<int64_t>> zeroPadOf(const Graph& g, const Node& pad)
{
    if (pad.opType != "Pad" || !pad.domain.empty() || pad.outputs.size() != 1 || pad.input(0) == kNone ||
        pad.attrString("mode", "constant") != "constant")
        return std::nullopt;
    std::vector<int64_t> pads;
    if (pad.opset < 11) {
        if (pad.attrFloat("value", 0.0f) != 0.0f)
            return std::nullopt;
        pads = pad.attrInts("pads");
    } else {
        if (pad.input(3) != kNone)  // axes (opset 18)
            return std::nullopt;
        const ValueId p = pad.input(1), value = pad.input(2);
        if (p == kNone || !g.value(p).isConstant())
            return std::nullopt;
        const auto v = g.value(p).initializer->toInt64s();
        if (!v)
            return std::nullopt;
        pads = *v;
        if (value != kNone) {
            if (!g.value(value).isConstant())
                return std::nullopt;
            const auto fill = g.value(value).initializer->toDoubles();
            if (!fill || fill->size() != 1 || (*fill)[0] != 0.0)
                return std::nullopt;
        }
    }
    const size_t rank = pads.size() / 2;
    if (pads.size() % 2 != 0 || rank < 3 || pads[0] != 0 || pads[1] != 0 || pads[rank] != 0 || pads[rank + 1] != 0 ||
        std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
        return std::nullopt;
    std::vector<int64_t> spatial(pads.begin() + 2, pads.begin() + long(rank));
    spatial.insert(spatial.end(), pads.begin() + long(rank) + 2, pads.end());
    return spatial;
}

// The node's attribute of this name, appended (empty) when it has none.
Attribute& attributeFor(Node& n, const std::string& name)
{
    for (Attribute& a : n.attributes)
        if (a.name == name)
            return a;
    n.attributes.push_back({});
    n.attributes.back().name = name;
    return n.attributes.back();
}

void setInts(Node& n, const std::string& name, std::vector<int64_t> values)
{
    Attribute& a = attributeFor(n, name);
    a.kind = Attribute::Kind::Ints;
    a.ints = std::move(values);
}

void setInt(Node& n, const std::string& name, int64_t value)
{
    Attribute& a = attributeFor(n, name);
    a.kind = Attribute::Kind::Int;
    a.i = value;
}

// The consumer's pads with `extra` added, when it can take them exactly.
bool absorb(Node& consumer, const std::vector<int64_t>& extra)
{
    if (!consumer.domain.empty() || (consumer.opType != "Conv" && consumer.opType != "AveragePool") ||
        consumer.attrString("auto_pad", "NOTSET") != "NOTSET")
        return false;
    std::vector<int64_t> pads = consumer.attrInts("pads");
    if (pads.empty())
        pads.assign(extra.size(), 0);
    if (pads.size() != extra.size())
        return false;
    if (consumer.opType == "AveragePool") {
        // Padded cells count in the divisor: the consumer must count its own, and
        // then may have none it would not have counted, nor windows past the end.
        const bool countsPads = consumer.attrInt("count_include_pad", 0) != 0;
        if (consumer.attrInt("ceil_mode", 0) != 0 ||
            (!countsPads && std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })))
            return false;
        setInt(consumer, "count_include_pad", 1);
    }
    for (size_t i = 0; i < pads.size(); ++i)
        pads[i] += extra[i];
    setInts(consumer, "pads", pads);
    return true;
}

class FusePadPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& pad = g.node(id);
            const auto extra = zeroPadOf(g, pad);
            if (!extra)
                continue;
            const ValueId in = pad.input(0), out = pad.outputs[0];
            if (out == kNone || g.value(out).isGraphOutput || edit.readBySubgraph(out))
                continue;
            const bool none = std::all_of(extra->begin(), extra->end(), [](int64_t p) { return p == 0; });
            if (!none) {
                const NodeId c = edit.soleConsumer(out);
                if (c == kNone || g.node(c).input(0) != out ||
                    std::count(g.node(c).inputs.begin(), g.node(c).inputs.end(), out) != 1 ||
                    !absorb(g.node(c), *extra))
                    continue;
                ++stats.fused;
            }
            edit.replaceUses(out, in);
            edit.removeNode(id);
            edit.dropIfUnused(out);
            ++stats.removed;
        }
        edit.commit();
        stats.detail = "removed " + std::to_string(stats.removed) + " Pad nodes (" + std::to_string(stats.fused) +
                       " folded into a Conv or AveragePool)";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFusePadPass() { return std::make_unique<FusePadPass>(); }

}  // namespace ramiel::passes
