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
    auto owners = [&] {
        std::vector<int32_t> owner(s.instanceCount(), 0);
        for (const Unit& u : units)
            for (NodeId n : *u.nodes)
                owner[size_t(s.instance(n, u.copy))] = u.worker;
        return owner;
    };
    auto apply = [&] {
        s.owner = owners();
        clustersFromOwners(s, P);
    };
    if (!switching || s.degree < 2) {
        apply();
        return report;
    }

    // Swap refinement: a unit on the worker that finishes last against a unit
    // elsewhere; keep the first swap that lowers the makespan, repeat.
    const OwnerSimulator sim(s, costs);
    std::vector<double> start, end;
    double best = sim.makespan(owners(), size_t(P));
    bool improved = true;
    while (improved && report.swapsTried < swapBudget) {
        improved = false;
        sim.makespan(owners(), size_t(P), &start, &end);
        const int critical = int(std::max_element(end.begin(), end.end()) - end.begin());
        for (size_t a = 0; a < units.size() && !improved && report.swapsTried < swapBudget; ++a) {
            if (units[a].worker != critical)
                continue;
            for (size_t b = 0; b < units.size() && report.swapsTried < swapBudget; ++b) {
                if (units[b].worker == critical)
                    continue;
                std::swap(units[a].worker, units[b].worker);
                ++report.swapsTried;
                const double m = sim.makespan(owners(), size_t(P));
                if (m < best * (1 - 1e-9)) {
                    best = m;
                    ++report.swapsKept;
                    improved = true;
                    break;
                }
                std::swap(units[a].worker, units[b].worker);
            }
        }
    }
    apply();
    return report;
}

}  // namespace ramiel
