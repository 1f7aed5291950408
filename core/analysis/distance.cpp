#include "core/analysis/distance.h"

#include <cmath>

namespace ramiel {

Distances computeDistances(const Topology& topo, const std::vector<double>& nodeCost, const EdgeCostFn& edgeCost)
{
    const size_t n = topo.nodeCount();
    auto w = [&](NodeId v) {
        const double c = nodeCost[static_cast<size_t>(v)];
        return std::isnan(c) ? 0.0 : c;
    };
    auto c = [&](NodeId a, NodeId b) { return edgeCost ? edgeCost(a, b) : 0.0; };

    Distances d;
    d.tlevel.assign(n, 0.0);
    d.blevel.assign(n, 0.0);
    for (NodeId v : topo.order)
        for (NodeId p : topo.preds[v])
            d.tlevel[v] = std::max(d.tlevel[v], d.tlevel[p] + w(p) + c(p, v));
    for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it) {
        const NodeId v = *it;
        double tail = 0;
        for (NodeId s : topo.succs[v])
            tail = std::max(tail, c(v, s) + d.blevel[s]);
        d.blevel[v] = w(v) + tail;
    }

    // Start at the source with the largest b-level, then keep taking the
    // successor that continues the longest path (the first in topological order on ties).
    NodeId cur = kNone;
    for (NodeId v : topo.order)
        if (topo.preds[v].empty() && (cur == kNone || d.blevel[v] > d.blevel[cur]))
            cur = v;
    if (cur == kNone)
        return d;
    d.span = d.blevel[cur];
    while (cur != kNone) {
        d.criticalPath.push_back(cur);
        NodeId next = kNone;
        double best = -1;
        for (NodeId s : topo.succs[cur]) {
            const double via = c(cur, s) + d.blevel[s];
            if (via > best) {
                best = via;
                next = s;
            }
        }
        cur = next;
    }
    return d;
}

}  // namespace ramiel
