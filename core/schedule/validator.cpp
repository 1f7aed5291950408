#include "core/schedule/validator.h"

#include <unordered_set>

namespace ramiel {

Validation validate(const Schedule& s, const Topology& topo)
{
    Validation v;
    auto problem = [&](const std::string& what) {
        v.valid = false;
        if (v.problems.size() < 20)
            v.problems.push_back(what);
    };
    const size_t n = s.instanceCount();
    const auto name = [&](InstanceId i) {
        return "node " + std::to_string(s.node(i)) + (s.degree > 1 ? " of copy " + std::to_string(s.copy(i)) : "");
    };
    if (s.nodesPerCopy != int32_t(topo.nodeCount()) || n != topo.nodeCount() * size_t(s.degree) || s.rank.size() != n) {
        problem("the schedule does not match the graph (" + std::to_string(n) + " instances for " +
                std::to_string(topo.nodeCount()) + " nodes x " + std::to_string(s.degree) + " copies)");
        return v;
    }
    if (s.clusters.size() > size_t(s.workers))
        problem(std::to_string(s.clusters.size()) + " clusters for " + std::to_string(s.workers) + " workers");

    std::vector<char> seenRank(n, 0);
    for (size_t i = 0; i < n; ++i) {
        const int32_t r = s.rank[i];
        if (r < 0 || size_t(r) >= n || seenRank[size_t(r)]++)
            problem("rank " + std::to_string(r) + " is used twice or out of range");
    }
    for (size_t i = 0; i < n && v.valid; ++i) {
        const auto id = static_cast<InstanceId>(i);
        for (NodeId p : topo.preds[size_t(s.node(id))])
            if (s.rank[size_t(s.instance(p, s.copy(id)))] >= s.rank[i])
                problem(name(id) + " is ranked before its predecessor " + name(s.instance(p, s.copy(id))));
    }

    std::vector<int> ownedCount(n, 0);
    std::unordered_set<InstanceId> inCluster;
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        inCluster.clear();
        int32_t last = -1;
        for (InstanceId i : s.clusters[c]) {
            if (i < 0 || size_t(i) >= n) {
                problem("cluster " + std::to_string(c) + " holds an unknown instance");
                continue;
            }
            if (!inCluster.insert(i).second)
                problem("cluster " + std::to_string(c) + " holds " + name(i) + " twice");
            if (s.rank[size_t(i)] <= last)
                problem("cluster " + std::to_string(c) + " runs " + name(i) +
                        " out of the global order (deadlock risk)");
            last = s.rank[size_t(i)];
            if (s.owner[size_t(i)] == int32_t(c))
                ++ownedCount[size_t(i)];
            else
                ++v.clones;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const int32_t o = s.owner[i];
        if (o < 0 || size_t(o) >= s.clusters.size())
            problem(name(InstanceId(i)) + " has no owner cluster");
        else if (ownedCount[i] != 1)
            problem(name(InstanceId(i)) + " is not in its owner cluster " + std::to_string(o));
    }
    return v;
}

}  // namespace ramiel
