#include "core/schedule/merging.h"

#include "core/schedule/simulator.h"

#include <algorithm>
#include <numeric>

namespace ramiel {

namespace {

constexpr double kTolerance = 1e-12;

bool notWorse(double candidate, double base) { return candidate <= base * (1 + 1e-9) + kTolerance; }

double overlap(const std::vector<double>& start, const std::vector<double>& end, size_t a, size_t b)
{
    return std::max(0.0, std::min(end[a], end[b]) - std::max(start[a], start[b]));
}

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
    const size_t k = s.clusters.size();
    if (k <= 1)
        return report;
    const OwnerSimulator sim(s, costs);
    std::vector<int32_t> owner = s.owner;
    std::vector<std::vector<InstanceId>> members = s.clusters;
    std::vector<double> load(k, 0.0);
    for (size_t c = 0; c < k; ++c)
        for (InstanceId i : members[c])
            load[c] += costs.node(s.node(i), s.samples(i));
    std::vector<char> active(k, 1);
    size_t activeCount = k;
    auto moveAll = [&](size_t from, size_t into) {
        report.steps.emplace_back(int32_t(from), int32_t(into));
        for (InstanceId i : members[from])
            owner[size_t(i)] = int32_t(into);
        members[into].insert(members[into].end(), members[from].begin(), members[from].end());
        members[from].clear();
        load[into] += load[from];
        load[from] = 0;
        active[from] = 0;
        --activeCount;
    };

    // Free merges: fill lanes greedily in order of start time (best fit: the
    // lane that ends latest but still before the cluster starts). The whole
    // set is checked with one simulation; if the makespan grew, each merge is
    // checked on its own.
    std::vector<double> start, end;
    double base = sim.makespan(owner, k, &start, &end);
    {
        std::vector<size_t> byStart(k);
        std::iota(byStart.begin(), byStart.end(), 0);
        std::stable_sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) { return start[a] < start[b]; });
        std::vector<std::pair<size_t, double>> lanes;  // (cluster, end)
        std::vector<std::pair<size_t, size_t>> merges;  // (from, into)
        for (size_t c : byStart) {
            int best = -1;
            for (size_t l = 0; l < lanes.size(); ++l)
                if (lanes[l].second <= start[c] + kTolerance &&
                    (best < 0 || lanes[l].second > lanes[size_t(best)].second))
                    best = int(l);
            if (best < 0) {
                lanes.emplace_back(c, end[c]);
                continue;
            }
            merges.emplace_back(c, lanes[size_t(best)].first);
            lanes[size_t(best)].second = std::max(lanes[size_t(best)].second, end[c]);
        }
        // Check all merges at once, else lane by lane, else merge by merge.
        auto check = [&](const std::vector<std::pair<size_t, size_t>>& group) {
            std::vector<int32_t> trial = owner;
            for (const auto& [from, into] : group)
                for (InstanceId i : members[from])
                    trial[size_t(i)] = int32_t(into);
            const double m = sim.makespan(trial, k);
            if (!notWorse(m, base))
                return false;
            base = std::min(base, m);
            for (const auto& [from, into] : group) {
                moveAll(from, into);
                ++report.freeMerges;
            }
            return true;
        };
        if (!merges.empty() && !check(merges)) {
            std::vector<std::vector<std::pair<size_t, size_t>>> byLane(k);
            for (const auto& m : merges)
                byLane[m.second].push_back(m);
            for (const auto& lane : byLane)
                if (!lane.empty() && !check(lane))
                    for (const auto& m : lane)
                        if (!check({m}))
                            ++report.rejected;
        }
    }

    // Over 64 clusters (DSC leaves one per node or so on large graphs), merges
    // go in rounds guided by one simulation each: the lighter half, lightest
    // first, each join the heavier cluster whose busy interval overlaps theirs
    // least (the interval widens as clusters join it).
    const size_t roundsDownTo = std::max<size_t>(64, size_t(limit));
    while (activeCount > roundsDownTo) {
        sim.makespan(owner, k, &start, &end);
        std::vector<size_t> byLoad;
        for (size_t c = 0; c < k; ++c)
            if (active[c])
                byLoad.push_back(c);
        std::stable_sort(byLoad.begin(), byLoad.end(), [&](size_t a, size_t b) { return load[a] < load[b]; });
        const size_t half = byLoad.size() / 2;
        for (size_t i = 0; i < half && activeCount > roundsDownTo; ++i) {
            const size_t light = byLoad[i];
            size_t partner = byLoad[half];
            for (size_t j = half + 1; j < byLoad.size(); ++j)
                if (overlap(start, end, byLoad[j], light) < overlap(start, end, partner, light))
                    partner = byLoad[j];
            start[partner] = std::min(start[partner], start[light]);
            end[partner] = std::max(end[partner], end[light]);
            moveAll(light, partner);
            ++report.guidedMerges;
        }
    }

    // Guided merges: the lightest cluster joins the partner that gives the
    // smallest simulated makespan. All partners are tried when at most 17
    // clusters remain, else the 8 (with P over 64: 2) whose busy intervals
    // overlap it least.
    while (activeCount > size_t(limit)) {
        sim.makespan(owner, k, &start, &end);
        size_t light = k;
        for (size_t c = 0; c < k; ++c)
            if (active[c] && (light == k || load[c] < load[light]))
                light = c;
        std::vector<size_t> partners;
        for (size_t c = 0; c < k; ++c)
            if (active[c] && c != light)
                partners.push_back(c);
        const size_t tried = activeCount <= 17 ? partners.size() : activeCount <= 64 ? 8 : 2;
        if (partners.size() > tried) {
            std::stable_sort(partners.begin(), partners.end(), [&](size_t a, size_t b) {
                return overlap(start, end, a, light) < overlap(start, end, b, light);
            });
            partners.resize(tried);
        }
        size_t bestPartner = partners.front();
        double bestMakespan = -1;
        std::vector<int32_t> trial = owner;
        for (size_t c : partners) {
            for (InstanceId i : members[light])
                trial[size_t(i)] = int32_t(c);
            const double m = sim.makespan(trial, k);
            if (bestMakespan < 0 || m < bestMakespan - kTolerance) {
                bestMakespan = m;
                bestPartner = c;
            }
        }
        moveAll(light, bestPartner);
        ++report.guidedMerges;
    }

    // Within P, keep merging while it still lowers the simulated makespan: on
    // graphs with little parallelism the hand-offs can cost more than they
    // save, down to a single cluster (the serial schedule).
    double current = sim.makespan(owner, k);
    while (activeCount > 1) {
        size_t light = k;
        for (size_t c = 0; c < k; ++c)
            if (active[c] && (light == k || load[c] < load[light]))
                light = c;
        size_t bestPartner = k;
        double bestMakespan = current;
        std::vector<int32_t> trial = owner;
        for (size_t c = 0; c < k; ++c) {
            if (!active[c] || c == light)
                continue;
            for (InstanceId i : members[light])
                trial[size_t(i)] = int32_t(c);
            const double m = sim.makespan(trial, k);
            if (m < bestMakespan * (1 - 1e-9)) {
                bestMakespan = m;
                bestPartner = c;
            }
        }
        if (bestPartner == k)
            break;
        moveAll(light, bestPartner);
        current = bestMakespan;
        ++report.guidedMerges;
    }

    s.owner = owner;
    clustersFromOwners(s, int(k));
    return report;
}

}  // namespace ramiel
