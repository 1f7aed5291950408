#include "core/schedule/linear_clustering.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ramiel {

std::vector<std::vector<NodeId>> linearClusters(const CostTable& costs, int samples)
{
    const Topology& topo = costs.topology();
    const size_t n = topo.nodeCount();
    std::vector<char> clustered(n, 0);
    std::vector<double> best(n, 0.0);  // heaviest remaining path ending at the node
    std::vector<NodeId> via(n, kNone);
    std::vector<std::vector<NodeId>> chains;

    auto recompute = [&](NodeId v) {
        double b = 0;
        NodeId from = kNone;
        const auto& preds = topo.preds[size_t(v)];
        for (size_t k = 0; k < preds.size(); ++k) {
            const NodeId p = preds[k];
            if (clustered[size_t(p)])
                continue;
            const double through = best[size_t(p)] + costs.predEdge(v, k, samples);
            if (through > b || from == kNone) {
                b = through;
                from = p;
            }
        }
        const double updated = b + costs.node(v, samples);
        const bool changed = updated != best[size_t(v)] || from != via[size_t(v)];
        best[size_t(v)] = updated;
        via[size_t(v)] = from;
        return changed;
    };
    // Candidates for the heaviest path's end: (best, -position), stale entries skipped.
    std::priority_queue<std::pair<double, int32_t>> heaviest;
    for (NodeId v : topo.order) {
        recompute(v);
        heaviest.push({best[size_t(v)], -topo.position[size_t(v)]});
    }

    // Positions of nodes whose path may change, smallest first (topological order).
    std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> dirty;
    std::vector<char> queued(n, 0);
    size_t left = n;
    while (left > 0) {
        NodeId end = kNone;  // ties keep the node earlier in topological order
        while (end == kNone) {
            const auto [b, negPos] = heaviest.top();
            heaviest.pop();
            const NodeId v = topo.order[size_t(-negPos)];
            if (!clustered[size_t(v)] && b == best[size_t(v)])
                end = v;
        }
        std::vector<NodeId> chain;
        for (NodeId v = end; v != kNone; v = via[size_t(v)]) {
            chain.push_back(v);
            clustered[size_t(v)] = 1;
        }
        left -= chain.size();
        std::reverse(chain.begin(), chain.end());
        // Only descendants of the removed chain can change; propagate while they do.
        for (NodeId v : chain)
            for (NodeId s : topo.succs[size_t(v)])
                if (!clustered[size_t(s)] && !queued[size_t(s)]) {
                    queued[size_t(s)] = 1;
                    dirty.push(topo.position[size_t(s)]);
                }
        while (!dirty.empty()) {
            const NodeId v = topo.order[size_t(dirty.top())];
            dirty.pop();
            queued[size_t(v)] = 0;
            if (!recompute(v))
                continue;
            heaviest.push({best[size_t(v)], -topo.position[size_t(v)]});
            for (NodeId s : topo.succs[size_t(v)])
                if (!clustered[size_t(s)] && !queued[size_t(s)]) {
                    queued[size_t(s)] = 1;
                    dirty.push(topo.position[size_t(s)]);
                }
        }
        chains.push_back(std::move(chain));
    }
    return chains;
}

}  // namespace ramiel
