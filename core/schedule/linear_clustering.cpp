#include "core/schedule/linear_clustering.h"

#include <algorithm>

namespace ramiel {

std::vector<std::vector<NodeId>> linearClusters(const CostTable& costs, int samples)
{
    const Topology& topo = costs.topology();
    const size_t n = topo.nodeCount();
    std::vector<char> clustered(n, 0);
    std::vector<double> best(n, 0.0);
    std::vector<NodeId> via(n, kNone);
    std::vector<NodeId> remaining(topo.order);  // unclustered nodes, in topological order
    std::vector<std::vector<NodeId>> chains;

    while (!remaining.empty()) {
        // Longest path ending at each remaining node, over remaining nodes only.
        NodeId end = kNone;
        for (NodeId v : remaining) {
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
            best[size_t(v)] = b + costs.node(v, samples);
            via[size_t(v)] = from;
            if (end == kNone || best[size_t(v)] > best[size_t(end)])
                end = v;  // ties keep the earlier node
        }
        std::vector<NodeId> chain;
        for (NodeId v = end; v != kNone; v = via[size_t(v)]) {
            chain.push_back(v);
            clustered[size_t(v)] = 1;
        }
        std::reverse(chain.begin(), chain.end());
        chains.push_back(std::move(chain));
        std::vector<NodeId> left;
        left.reserve(remaining.size());
        for (NodeId v : remaining)
            if (!clustered[size_t(v)])
                left.push_back(v);
        remaining.swap(left);
    }
    return chains;
}

}  // namespace ramiel
