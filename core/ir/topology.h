// The dependency structure of a graph, computed once: a deterministic
// topological order, predecessor/successor lists, and levels.
#pragma once

#include "core/ir/graph.h"

#include <vector>

namespace ramiel {

struct Topology {
    std::vector<NodeId> order;                // a topological order of all nodes
    std::vector<int32_t> position;            // position[node] = index in order
    std::vector<std::vector<NodeId>> preds;   // by node id, ascending position
    std::vector<std::vector<NodeId>> succs;   // by node id, ascending position
    std::vector<int32_t> level;               // 0 for nodes without predecessors
    size_t edgeCount = 0;                     // distinct (producer, consumer) node pairs

    size_t nodeCount() const { return order.size(); }
    int32_t depth() const;  // number of levels
    int32_t width() const;  // most nodes on one level
};

// Builds the topology. Among ready nodes the one with the smallest id comes
// first, so a file that is already sorted keeps its order. Throws
// Error(InvalidGraph) naming the nodes of a cycle if there is one.
Topology buildTopology(const Graph& graph);

}  // namespace ramiel
