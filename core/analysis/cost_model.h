// Static cost model: FLOPs and bytes moved per node from its shapes, turned
// into seconds by a roofline-style formula with calibrated machine constants:
//   seconds(n) = overhead + max(flops(n) / flopsPerSecond, bytes(n) / bytesPerSecond)
#pragma once

#include "core/analysis/machine.h"
#include "core/ir/graph.h"

#include <string>
#include <vector>

namespace ramiel {

struct NodeCost {
    double flops = 0;
    double bytesRead = 0;
    double bytesWritten = 0;
    bool known = true;        // false when a shape the formula needs is unknown
    bool estimated = false;   // no formula for this op: a byte-based estimate
    std::string unknownReason;

    double bytes() const { return bytesRead + bytesWritten; }
};

// FLOPs and bytes of one node, from the shapes its values carry.
NodeCost estimateNodeCost(const Graph& graph, NodeId node);

// FLOPs and bytes of every node of the graph, by node id.
std::vector<NodeCost> estimateCosts(const Graph& graph);

// Seconds for a node cost; NaN when the cost is unknown.
double costSeconds(const NodeCost& cost, const MachineConstants& machine);

// Seconds for every node, by node id (NaN for unknown costs).
std::vector<double> costSeconds(const std::vector<NodeCost>& costs, const MachineConstants& machine);

}  // namespace ramiel
