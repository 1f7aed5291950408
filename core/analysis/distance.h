// The distance pass: t-level and b-level of every node, the span and the
// critical path, for node costs w and (optionally) edge costs c.
//   tlevel(n) = max over predecessors p of tlevel(p) + w(p) + c(p, n)   (0 at sources)
//   blevel(n) = w(n) + max over successors s of c(n, s) + blevel(s)     (w(n) at sinks)
//   span      = max over n of tlevel(n) + blevel(n)
#pragma once

#include "core/ir/topology.h"

#include <functional>
#include <vector>

namespace ramiel {

using EdgeCostFn = std::function<double(NodeId from, NodeId to)>;

struct Distances {
    std::vector<double> tlevel;  // by node id
    std::vector<double> blevel;  // by node id
    double span = 0;
    std::vector<NodeId> criticalPath;  // source to sink; ties go to the earlier node
};

// NaN node costs count as 0 (the caller reports them as unknown). Without an
// edge cost function every edge costs 0.
Distances computeDistances(const Topology& topo, const std::vector<double>& nodeCost,
                           const EdgeCostFn& edgeCost = {});

}  // namespace ramiel
