// Modules from node names: exporters name nodes by the module that made them
// (torchvision: /features/denseblock1/denselayer2/conv1/Conv), so a name's
// prefixes are the modules around the node. Collapsing a module draws its
// nodes as one box, so that a large model reads as its blocks. Pure graph
// bookkeeping: the views draw what this returns.
#pragma once

#include "core/ir/graph.h"

#include <string>
#include <vector>

namespace ramiel {

// The modules around a node, outermost first, each ending in '/':
// "/features/denseblock1/denselayer2/conv1/Conv" gives "/features/",
// "/features/denseblock1/", "/features/denseblock1/denselayer2/" and
// "/features/denseblock1/denselayer2/conv1/" (the last component is the
// node's own name). A name without '/' lies in no module.
std::vector<std::string> modulePrefixes(const std::string& nodeName);

struct NodeGroups {
    std::vector<std::string> prefixes;          // one per group, in the order of their first node
    std::vector<std::vector<NodeId>> members;   // by group, in node order
    std::vector<int> groupOf;                   // by node id; -1: not in a collapsed module
};

// Groups the nodes lying in any of the `collapsed` modules; when two collapsed
// modules nest, the outer one holds the node. A module with no node makes no group.
NodeGroups groupByModules(const Graph& graph, const std::vector<std::string>& collapsed);

// The modules `depth` levels deep (1: "/features/") that hold at least two
// nodes, in the order of their first node: what collapsing "at depth" folds.
std::vector<std::string> modulesAtDepth(const Graph& graph, int depth);

}  // namespace ramiel
