// What the graph view draws, decided without Qt: a box per operator, a
// terminal per graph input and output, and an edge per (producer, consumer)
// pair, with box sizes for Graphviz. Constants (initializers) are not drawn:
// they show up in the node's properties, as in Netron.
#pragma once

#include "core/analysis/grouping.h"
#include "core/ir/graph.h"
#include "core/layout/dot_layout.h"

#include <functional>
#include <string>
#include <vector>

namespace ramiel::studio {

struct DisplayItem {
    enum class Kind { Operator, Input, Output, Group };
    Kind kind = Kind::Operator;
    NodeId node = kNone;    // Operator
    ValueId value = kNone;  // Input / Output
    int group = -1;         // Group: index into DisplayGraph::groups
    std::string title;      // op type, or the value's name
    std::string subtitle;   // node name (when names are shown) or the value's shape
    double width = 0;       // points
    double height = 0;
};

struct DisplayEdge {
    int from = 0;  // item indices
    int to = 0;
    ValueId value = kNone;  // the (first) value carried
    NodeId fromNode = kNone;
    NodeId toNode = kNone;
};

struct DisplayGraph {
    std::vector<DisplayItem> items;
    std::vector<DisplayEdge> edges;
    std::vector<int> itemOfNode;  // by node id (a collapsed module's nodes: its box)
    bool showNames = false;
    NodeGroups groups;            // the collapsed modules drawn as one box each
};

// How wide a label is drawn, in points: the views measure with the scene's
// fonts; without them, an estimate per character.
struct LabelWidths {
    std::function<double(const std::string&)> title;     // bold operator type, or a terminal's name
    std::function<double(const std::string&)> subtitle;  // node name or shape, smaller
};

// `collapsed`: modules (name prefixes, core/analysis/grouping.h) drawn as one box each.
DisplayGraph displayGraphOf(const Graph& graph, bool showNames, const LabelWidths& widths = {},
                            const std::vector<std::string>& collapsed = {});
LayoutInput layoutInputOf(const DisplayGraph& display, bool leftToRight);
// A subgraph a node holds (an If's then_branch, a Loop's body): the
// attribute, its index among the attribute's graphs, and how many it has.
struct SubgraphRef {
    std::string attribute;
    int index = 0;
    int count = 1;
    const Graph* graph = nullptr;
};
std::vector<SubgraphRef> subgraphsOf(const Node& node);
// The subgraph `index` of attribute `attribute`, or nullptr.
const Graph* subgraphOf(const Node& node, const std::string& attribute, int index);

// "1x3x224x224", "?" when unknown.
std::string shapeText(const TensorType& type);

}  // namespace ramiel::studio
