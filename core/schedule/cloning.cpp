#include "core/schedule/cloning.h"

#include "core/schedule/simulator.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace ramiel {

CloneReport cloneCheapNodes(Schedule& s, const CostTable& costs)
{
    const Topology& topo = costs.topology();
    CloneReport report;
    report.crossEdgesBefore = int(crossEdges(s, costs).size());
    report.crossEdgesAfter = report.crossEdgesBefore;
    if (s.clusters.size() < 2)
        return report;

    // Which clusters hold each instance (owner or clone).
    std::vector<std::vector<int32_t>> holders(s.instanceCount());
    for (size_t c = 0; c < s.clusters.size(); ++c)
        for (InstanceId i : s.clusters[c])
            holders[size_t(i)].push_back(int32_t(c));
    auto holds = [&](int32_t c, InstanceId i) {
        const auto& h = holders[size_t(i)];
        return std::find(h.begin(), h.end(), c) != h.end();
    };

    std::vector<InstanceId> byRank(s.instanceCount());
    for (size_t i = 0; i < byRank.size(); ++i)
        byRank[size_t(s.rank[i])] = InstanceId(i);

    // Every candidate costs a simulation. On a large plan with thousands of cut
    // edges (DSC on swin_t at d = 4: 755 clones kept, then 3,700 rejected in a
    // row, 4.5 s) the search stops after this many rejections in a row.
    constexpr int kRejectionsInARow = 64;
    int rejectedInARow = 0;
    double makespan = simulateMakespan(s, costs);
    for (InstanceId u : byRank) {
        if (rejectedInARow >= kRejectionsInARow)
            break;
        const NodeId n = s.node(u);
        const int copy = s.copy(u);
        const double w = costs.node(n, s.samples(u));
        // The largest hand-off u costs each consumer cluster that lacks it.
        std::map<int32_t, double> saves;
        for (NodeId succ : topo.succs[size_t(n)]) {
            const InstanceId v = s.instance(succ, copy);
            const auto& preds = topo.preds[size_t(succ)];
            const size_t k = size_t(std::find(preds.begin(), preds.end(), n) - preds.begin());
            const double c = costs.predEdge(succ, k, s.samples(v));
            for (int32_t x : holders[size_t(v)])
                if (!holds(x, u))
                    saves[x] = std::max(saves[x], c);
        }
        for (const auto& [x, saved] : saves) {
            if (w >= saved)
                continue;
            bool inputsLocal = true;
            for (NodeId p : topo.preds[size_t(n)])
                inputsLocal = inputsLocal && holds(x, s.instance(p, copy));
            if (!inputsLocal)
                continue;
            auto& items = s.clusters[size_t(x)];
            const auto at = std::lower_bound(items.begin(), items.end(), u, [&](InstanceId a, InstanceId b) {
                return s.rank[size_t(a)] < s.rank[size_t(b)];
            });
            const auto inserted = items.insert(at, u);
            const double m = simulateMakespan(s, costs);
            if (m <= makespan * (1 + 1e-9)) {
                makespan = std::min(makespan, m);
                holders[size_t(u)].push_back(x);
                ++report.clones;
                rejectedInARow = 0;
            } else {
                items.erase(inserted);
                ++rejectedInARow;
            }
        }
    }
    report.crossEdgesAfter = int(crossEdges(s, costs).size());
    return report;
}

}  // namespace ramiel
