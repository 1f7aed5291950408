#include "core/schedule/hyperclustering.h"

#include "core/schedule/simulator.h"

#include <algorithm>

namespace ramiel {

HyperclusterReport combineCopies(Schedule& s, const CostTable& costs, const std::vector<CopyClusters>& perCopy,
                                 bool switching, int swapBudget)
{
    HyperclusterReport report;
    const int P = s.workers;
    struct Unit {
        int copy;
        const std::vector<NodeId>* nodes;
        int worker;
    };
    std::vector<Unit> units;
    for (int j = 0; j < s.degree; ++j) {
        const CopyClusters& cc = perCopy[size_t(j)];
        for (size_t i = 0; i < cc.size(); ++i)
            units.push_back({j, &cc[i], switching ? int((i + size_t(j)) % size_t(P)) : int(i % size_t(P))});
    }
    auto apply = [&] {
        for (const Unit& u : units)
            for (NodeId n : *u.nodes)
                s.owner[size_t(s.instance(n, u.copy))] = u.worker;
        clustersFromOwners(s, P);
    };
    apply();
    if (!switching || s.degree < 2)
        return report;

    // Swap refinement: a unit on the worker that finishes last against a unit
    // elsewhere; keep the first swap that lowers the makespan, repeat.
    double best = simulateMakespan(s, costs);
    bool improved = true;
    while (improved && report.swapsTried < swapBudget) {
        improved = false;
        const Simulation sim = simulate(s, costs);
        // Worker numbers are cluster indices once empty clusters are dropped: map back.
        std::vector<int> workerOf(s.clusters.size());
        for (size_t c = 0; c < s.clusters.size(); ++c)
            workerOf[c] = s.clusters[c].empty() ? -1 : 0;
        for (const Unit& u : units) {
            const int c = s.owner[size_t(s.instance(u.nodes->front(), u.copy))];
            workerOf[size_t(c)] = u.worker;
        }
        const size_t lastCluster = size_t(std::max_element(sim.end.begin(), sim.end.end()) - sim.end.begin());
        const int critical = workerOf[lastCluster];
        for (size_t a = 0; a < units.size() && !improved && report.swapsTried < swapBudget; ++a) {
            if (units[a].worker != critical)
                continue;
            for (size_t b = 0; b < units.size() && report.swapsTried < swapBudget; ++b) {
                if (units[b].worker == critical)
                    continue;
                std::swap(units[a].worker, units[b].worker);
                apply();
                ++report.swapsTried;
                const double m = simulateMakespan(s, costs);
                if (m < best * (1 - 1e-9)) {
                    best = m;
                    ++report.swapsKept;
                    improved = true;
                    break;
                }
                std::swap(units[a].worker, units[b].worker);
            }
        }
        apply();
    }
    return report;
}

}  // namespace ramiel
