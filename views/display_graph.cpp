#include "display_graph.h"

#include "core/ir/fused_ops.h"
#include "core/util/text.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ramiel::studio {
namespace {

// Boxes grow with their text up to this many characters; longer labels are
// elided to the box when drawn (the full text is in the tooltip).
constexpr size_t kMaxLabel = 28;

std::string clipped(const std::string& s)
{
    // Printable, and bounded: a name of a megabyte stays a label.
    std::string p = printable(s);
    if (p.size() > 512)
        p = p.substr(0, 512);
    return p;
}

void sizeItem(DisplayItem& item, const LabelWidths& widths)
{
    item.height = item.subtitle.empty() ? 24.0 : 36.0;
    // About 6.2 points per character at the scene's 8.5 pt font when not measured.
    auto width = [](const std::function<double(const std::string&)>& measure, const std::string& text) {
        return measure ? measure(text) : 6.2 * double(text.size());
    };
    // Boxes grow with their text up to about kMaxLabel characters; the rest is elided.
    const double text = std::min(std::max(width(widths.title, item.title), width(widths.subtitle, item.subtitle)),
                                 6.8 * double(kMaxLabel));
    // Terminals are ovals: their round ends hold no text.
    const double ends = item.kind == DisplayItem::Kind::Operator ? 0.0 : item.height * 0.6;
    item.width = std::max(54.0, 14.0 + ends + text);
}

}  // namespace

std::vector<SubgraphRef> subgraphsOf(const Node& node)
{
    std::vector<SubgraphRef> out;
    for (const Attribute& a : node.attributes) {
        if (a.kind == Attribute::Kind::Graph && a.g)
            out.push_back({a.name, 0, 1, a.g.get()});
        if (a.kind == Attribute::Kind::Graphs)
            for (size_t k = 0; k < a.graphs.size(); ++k)
                if (a.graphs[k])
                    out.push_back({a.name, int(k), int(a.graphs.size()), a.graphs[k].get()});
    }
    return out;
}

const Graph* subgraphOf(const Node& node, const std::string& attribute, int index)
{
    for (const SubgraphRef& r : subgraphsOf(node))
        if (r.attribute == attribute && r.index == index)
            return r.graph;
    return nullptr;
}

std::string shapeText(const TensorType& type)
{
    return type.shape ? type.shape->toString() : "?";
}

DisplayGraph displayGraphOf(const Graph& graph, bool showNames, const LabelWidths& widths,
                            const std::vector<std::string>& collapsed)
{
    DisplayGraph d;
    d.showNames = showNames;
    d.itemOfNode.assign(graph.nodeCount(), -1);
    d.groups = groupByModules(graph, collapsed);
    std::vector<int> itemOfGroup(d.groups.prefixes.size(), -1);
    std::map<ValueId, int> inputItem;
    for (ValueId v : graph.inputs()) {
        const Value& value = graph.value(v);
        if (value.isConstant())
            continue;
        DisplayItem item;
        item.kind = DisplayItem::Kind::Input;
        item.value = v;
        item.title = clipped(value.name);
        item.subtitle = shapeText(value.type);
        sizeItem(item, widths);
        inputItem[v] = int(d.items.size());
        d.items.push_back(std::move(item));
    }
    // A subgraph's reads of the enclosing graph's values: drawn as inputs.
    for (const Value& value : graph.values()) {
        if (!value.isOuterScope || value.consumers.empty() || inputItem.count(value.id))
            continue;
        DisplayItem item;
        item.kind = DisplayItem::Kind::Input;
        item.value = value.id;
        item.title = clipped(value.name);
        item.subtitle = "outer scope";
        sizeItem(item, widths);
        inputItem[value.id] = int(d.items.size());
        d.items.push_back(std::move(item));
    }
    for (const Node& node : graph.nodes()) {
        if (const int g = d.groups.groupOf[size_t(node.id)]; g >= 0) {
            // A collapsed module: one box where its first node would be, for all of its nodes.
            if (itemOfGroup[size_t(g)] < 0) {
                DisplayItem item;
                item.kind = DisplayItem::Kind::Group;
                item.group = g;
                std::string prefix = d.groups.prefixes[size_t(g)];
                prefix.pop_back();  // the trailing '/'
                item.title = clipped(prefix.substr(prefix.rfind('/') + 1));
                const size_t count = d.groups.members[size_t(g)].size();
                item.subtitle = (showNames ? clipped(prefix) + "  " : std::string()) + std::to_string(count) + " nodes";
                sizeItem(item, widths);
                item.height += 8;  // a module reads as a block
                itemOfGroup[size_t(g)] = int(d.items.size());
                d.items.push_back(std::move(item));
            }
            d.itemOfNode[size_t(node.id)] = itemOfGroup[size_t(g)];
            continue;
        }
        DisplayItem item;
        item.node = node.id;
        if (node.domain == kRamielDomain && node.opType == kFusedConv) {  // what it stands for
            const std::string act = node.attrString("activation", "");
            const bool sum = node.input(3) != kNone;
            item.title = clipped(std::string("Conv") + (sum ? "+Add" : "") + (act.empty() ? (sum ? "" : "+?") : "+" + act));
        } else if (node.domain == kRamielDomain && node.opType == kFusedBatchNorm) {
            const std::string act = node.attrString("activation", "");
            item.title = clipped(std::string(node.inputs.size() > 5 ? "Concat+" : "") + "BatchNorm" + (act.empty() ? "" : "+" + act));
        } else if (node.domain == kRamielDomain && node.opType == kFusedGroupNorm) {
            const std::string act = node.attrString("activation", "");
            item.title = clipped("GroupNorm" + (act.empty() ? std::string() : "+" + act));
        } else if (node.domain == kRamielDomain && node.opType == kMatMulAdd) {
            item.title = clipped(node.attr("activation") ? "MatMul+Add+" + node.attrString("activation", "") : "MatMul+Add");
        } else if (node.domain == kRamielDomain) {  // Gelu, Silu: the function they compute (the tooltip names the domain)
            item.title = clipped(node.opType);
        } else
            item.title = clipped(node.domain.empty() ? node.opType : node.domain + "." + node.opType);
        if (showNames)
            item.subtitle = clipped(node.name);
        sizeItem(item, widths);
        d.itemOfNode[size_t(node.id)] = int(d.items.size());
        d.items.push_back(std::move(item));
    }

    std::map<std::pair<int, int>, size_t> seen;
    auto addEdge = [&](int from, int to, ValueId v, NodeId fromNode, NodeId toNode) {
        if (from < 0 || to < 0 || from == to || seen.count({from, to}))  // none inside a collapsed module
            return;
        seen[{from, to}] = d.edges.size();
        d.edges.push_back(DisplayEdge{from, to, v, fromNode, toNode});
    };
    auto sourceOf = [&](ValueId v) -> std::pair<int, NodeId> {
        const Value& value = graph.value(v);
        if (value.producer != kNone)
            return {d.itemOfNode[size_t(value.producer)], value.producer};
        auto it = inputItem.find(v);
        return {it == inputItem.end() ? -1 : it->second, kNone};
    };
    for (const Node& node : graph.nodes()) {
        const int to = d.itemOfNode[size_t(node.id)];
        for (const auto* list : {&node.inputs, &node.implicitInputs})
            for (ValueId v : *list) {
                if (v == kNone)
                    continue;
                const auto [from, fromNode] = sourceOf(v);
                addEdge(from, to, v, fromNode, node.id);
            }
    }
    for (ValueId v : graph.outputs()) {
        const Value& value = graph.value(v);
        DisplayItem item;
        item.kind = DisplayItem::Kind::Output;
        item.value = v;
        item.title = clipped(value.name);
        item.subtitle = shapeText(value.type);
        sizeItem(item, widths);
        const int index = int(d.items.size());
        d.items.push_back(std::move(item));
        const auto [from, fromNode] = sourceOf(v);
        addEdge(from, index, v, fromNode, kNone);
    }
    return d;
}

LayoutInput layoutInputOf(const DisplayGraph& display, bool leftToRight)
{
    LayoutInput in;
    in.leftToRight = leftToRight;
    in.nodeSizes.reserve(display.items.size());
    for (const DisplayItem& item : display.items)
        in.nodeSizes.emplace_back(item.width, item.height);
    for (const DisplayEdge& e : display.edges)
        in.edges.emplace_back(e.from, e.to);
    return in;
}

}  // namespace ramiel::studio
