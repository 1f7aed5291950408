// Critical-path-based linear clustering (Kim & Browne): repeatedly take the
// heaviest path among the nodes not yet clustered and make it a cluster.
#pragma once

#include "core/schedule/cost_table.h"

#include <vector>

namespace ramiel {

// Chains of node ids in topological order, heaviest first; the first is the
// critical path. Path weight counts node costs and the edge costs between
// consecutive nodes (the hand-offs a chain saves), at `samples` per node.
std::vector<std::vector<NodeId>> linearClusters(const CostTable& costs, int samples);

}  // namespace ramiel
