#include "display_graph.h"

#include "core/ir/fused_ops.h"
#include "core/util/text.h"

#include <algorithm>
#include <map>
#include <utility>

namespace ramiel::studio {
namespace {

constexpr size_t kMaxLabel = 28;

std::string clipped(const std::string& s)
{
    std::string p = printable(s);
    if (p.size() > kMaxLabel)
        p = p.substr(0, kMaxLabel - 1) + "~";
    return p;
}

void sizeItem(DisplayItem& item)
{
    // About 6.2 points per character at the scene's 8.5 pt font, plus padding.
    const size_t chars = std::max(item.title.size(), item.subtitle.size());
    item.width = std::clamp(14.0 + 6.2 * double(chars), 54.0, 200.0);
    item.height = item.subtitle.empty() ? 24.0 : 36.0;
}

}  // namespace

std::string shapeText(const TensorType& type)
{
    return type.shape ? type.shape->toString() : "?";
}

DisplayGraph displayGraphOf(const Graph& graph, bool showNames)
{
    DisplayGraph d;
    d.showNames = showNames;
    d.itemOfNode.assign(graph.nodeCount(), -1);
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
        sizeItem(item);
        inputItem[v] = int(d.items.size());
        d.items.push_back(std::move(item));
    }
    for (const Node& node : graph.nodes()) {
        DisplayItem item;
        item.node = node.id;
        if (node.domain == kRamielDomain && node.opType == kFusedConv)
            item.title = clipped("Conv+" + node.attrString("activation", "?"));  // what it stands for
        else
            item.title = clipped(node.domain.empty() ? node.opType : node.domain + "." + node.opType);
        if (showNames)
            item.subtitle = clipped(node.name);
        sizeItem(item);
        d.itemOfNode[size_t(node.id)] = int(d.items.size());
        d.items.push_back(std::move(item));
    }

    std::map<std::pair<int, int>, size_t> seen;
    auto addEdge = [&](int from, int to, ValueId v, NodeId fromNode, NodeId toNode) {
        if (from < 0 || to < 0 || seen.count({from, to}))
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
        sizeItem(item);
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
