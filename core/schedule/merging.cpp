#include "core/schedule/merging.h"

#include "core/schedule/simulator.h"

#include <algorithm>
#include <numeric>

namespace ramiel {

namespace {

constexpr double kTolerance = 1e-12;

bool notWorse(double candidate, double base) { return candidate <= base * (1 + 1e-9) + kTolerance; }

}  // namespace

void mergeInto(Schedule& s, size_t from, size_t into)
{
    auto& a = s.clusters[from];
    auto& b = s.clusters[into];
    for (InstanceId i : a)
        if (s.owner[size_t(i)] == int32_t(from))
            s.owner[size_t(i)] = int32_t(into);
    std::vector<InstanceId> merged;
    merged.reserve(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(merged),
               [&](InstanceId x, InstanceId y) { return s.rank[size_t(x)] < s.rank[size_t(y)]; });
    b.swap(merged);
    a.clear();
}

MergeReport mergeClusters(Schedule& s, const CostTable& costs, int limit)
{
    MergeReport report;
    if (s.clusters.size() <= 1)
        return report;

    // Free merges, lanes filled greedily in order of start time (best fit: the
    // lane that ends latest but still before the cluster starts).
    {
        const Simulation sim = simulate(s, costs);
        double base = sim.makespan;
        std::vector<size_t> byStart(s.clusters.size());
        std::iota(byStart.begin(), byStart.end(), 0);
        std::stable_sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) { return sim.start[a] < sim.start[b]; });
        std::vector<std::pair<size_t, double>> lanes;  // (cluster, end)
        for (size_t c : byStart) {
            int best = -1;
            for (size_t l = 0; l < lanes.size(); ++l)
                if (lanes[l].second <= sim.start[c] + kTolerance && (best < 0 || lanes[l].second > lanes[size_t(best)].second))
                    best = int(l);
            if (best >= 0) {
                const Schedule before = s;
                mergeInto(s, c, lanes[size_t(best)].first);
                const double m = simulateMakespan(s, costs);
                if (notWorse(m, base)) {
                    base = std::min(base, m);
                    lanes[size_t(best)].second = std::max(lanes[size_t(best)].second, sim.end[c]);
                    ++report.freeMerges;
                    continue;
                }
                s = before;
                ++report.rejected;
            }
            lanes.emplace_back(c, sim.end[c]);
        }
        normalizeClusters(s);
    }

    // Guided merges.
    while (s.clusters.size() > size_t(limit)) {
        const Simulation sim = simulate(s, costs);
        const std::vector<double> loads = clusterLoads(s, costs);
        const size_t light = size_t(std::min_element(loads.begin(), loads.end()) - loads.begin());
        std::vector<size_t> partners;
        for (size_t c = 0; c < s.clusters.size(); ++c)
            if (c != light)
                partners.push_back(c);
        const size_t kMaxTried = 8;
        if (partners.size() > 2 * kMaxTried) {
            auto overlap = [&](size_t c) {
                return std::max(0.0, std::min(sim.end[c], sim.end[light]) - std::max(sim.start[c], sim.start[light]));
            };
            std::stable_sort(partners.begin(), partners.end(),
                             [&](size_t a, size_t b) { return overlap(a) < overlap(b); });
            partners.resize(kMaxTried);
        }
        size_t bestPartner = partners.front();
        double bestMakespan = -1;
        for (size_t c : partners) {
            Schedule trial = s;
            mergeInto(trial, light, c);
            const double m = simulateMakespan(trial, costs);
            if (bestMakespan < 0 || m < bestMakespan - kTolerance) {
                bestMakespan = m;
                bestPartner = c;
            }
        }
        mergeInto(s, light, bestPartner);
        normalizeClusters(s);
        ++report.guidedMerges;
    }
    return report;
}

}  // namespace ramiel
