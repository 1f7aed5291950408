#include "core/schedule/simulator.h"

#include <algorithm>
#include <unordered_map>

namespace ramiel {

namespace {

struct Entry {
    int32_t rank;
    int32_t cluster;
    InstanceId instance;
};

// The shared event loop; `record` sees every item with its times.
template <typename Record>
double run(const Schedule& s, const CostTable& costs, Record&& record)
{
    const Topology& topo = costs.topology();
    std::vector<Entry> entries;
    bool hasClones = false;
    size_t items = 0;
    for (const auto& c : s.clusters)
        items += c.size();
    if (items == s.instanceCount()) {
        // No clones: the rank is a permutation, so place entries directly.
        entries.resize(items);
        for (size_t c = 0; c < s.clusters.size(); ++c)
            for (InstanceId i : s.clusters[c])
                entries[size_t(s.rank[size_t(i)])] = {s.rank[size_t(i)], int32_t(c), i};
    } else {
        for (size_t c = 0; c < s.clusters.size(); ++c)
            for (InstanceId i : s.clusters[c]) {
                entries.push_back({s.rank[size_t(i)], int32_t(c), i});
                hasClones = hasClones || s.isClone(c, i);
            }
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
            return a.rank != b.rank ? a.rank < b.rank : a.cluster < b.cluster;
        });
    }

    std::vector<double> finish(s.instanceCount(), 0.0);          // owner's copy
    std::unordered_map<int64_t, double> cloneFinish;              // (cluster, instance) -> finish
    auto key = [](int32_t c, InstanceId i) { return (int64_t(c) << 32) | uint32_t(i); };
    std::vector<double> free(s.clusters.size(), 0.0);
    std::vector<int> lastThreads(s.clusters.size());  // each run starts at the worker's own count
    for (size_t c = 0; c < lastThreads.size(); ++c)
        lastThreads[c] = s.workerThreadsOf(c);
    double makespan = 0;
    for (const Entry& e : entries) {
        const NodeId n = s.node(e.instance);
        const int copy = s.copy(e.instance);
        const int samples = s.subBatch[static_cast<size_t>(copy)];
        double ready = free[static_cast<size_t>(e.cluster)];
        const auto& preds = topo.preds[static_cast<size_t>(n)];
        for (size_t k = 0; k < preds.size(); ++k) {
            const InstanceId p = s.instance(preds[k], copy);
            double arrival;
            if (s.owner[static_cast<size_t>(p)] == e.cluster) {
                arrival = finish[static_cast<size_t>(p)];
            } else if (auto it = hasClones ? cloneFinish.find(key(e.cluster, p)) : cloneFinish.end();
                       it != cloneFinish.end()) {
                arrival = it->second;
            } else {
                arrival = finish[static_cast<size_t>(p)] + costs.predEdge(n, k, samples);
            }
            ready = std::max(ready, arrival);
        }
        const int threads = s.threadsOf(size_t(e.cluster), e.instance);
        double cost = costs.node(n, samples, threads);
        if (int& last = lastThreads[size_t(e.cluster)]; threads != last) {
            cost += costs.threadSwitch(n, samples);
            last = threads;
        }
        const double end = ready + cost;
        const bool clone = s.owner[static_cast<size_t>(e.instance)] != e.cluster;
        if (clone)
            cloneFinish[key(e.cluster, e.instance)] = end;
        else
            finish[static_cast<size_t>(e.instance)] = end;
        record(e, ready, end, free[static_cast<size_t>(e.cluster)], clone);
        free[static_cast<size_t>(e.cluster)] = end;
        makespan = std::max(makespan, end);
    }
    return makespan;
}

}  // namespace

double serialSeconds(const CostTable& costs, int batch)
{
    double total = 0;
    for (size_t n = 0; n < costs.nodeCount(); ++n)
        total += costs.node(static_cast<NodeId>(n), batch);
    return total;
}

Simulation simulate(const Schedule& s, const CostTable& costs, bool withGantt)
{
    Simulation r;
    const size_t k = s.clusters.size();
    r.busy.assign(k, 0);
    r.wait.assign(k, 0);
    r.start.assign(k, -1);
    r.end.assign(k, 0);
    r.makespan = run(s, costs, [&](const Entry& e, double start, double end, double freeAt, bool clone) {
        const auto c = static_cast<size_t>(e.cluster);
        r.busy[c] += end - start;
        r.wait[c] += start - freeAt;
        if (r.start[c] < 0)
            r.start[c] = start;
        r.end[c] = end;
        if (withGantt)
            r.gantt.push_back({e.instance, e.cluster, start, end, clone});
    });
    r.serial = serialSeconds(costs, s.batch);
    r.speedup = r.makespan > 0 ? r.serial / r.makespan : 0;
    return r;
}

double simulateMakespan(const Schedule& s, const CostTable& costs)
{
    return run(s, costs, [](const Entry&, double, double, double, bool) {});
}

OwnerSimulator::OwnerSimulator(const Schedule& s, const CostTable& costs)
{
    const Topology& topo = costs.topology();
    const size_t n = s.instanceCount();
    byRank_.resize(n);
    cost_.resize(n);
    predStart_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
        const auto id = InstanceId(i);
        byRank_[size_t(s.rank[i])] = id;
        const int threads = s.threads.empty() ? 1 : std::max(1, int(s.threads[i]));
        cost_[i] = costs.node(s.node(id), s.samples(id), threads);
        if (threads > 1) {
            threads_.resize(n, 1);
            threads_[i] = threads;
        }
    }
    if (!threads_.empty())
        for (size_t i = 0; i < n; ++i)
            switch_.push_back(costs.threadSwitch(s.node(InstanceId(i)), s.samples(InstanceId(i))));
    for (size_t i = 0; i < n; ++i) {
        const auto id = InstanceId(i);
        const NodeId node = s.node(id);
        const auto& preds = topo.preds[size_t(node)];
        for (size_t k = 0; k < preds.size(); ++k) {
            pred_.push_back(s.instance(preds[k], s.copy(id)));
            edge_.push_back(costs.predEdge(node, k, s.samples(id)));
        }
        predStart_[i + 1] = pred_.size();
    }
    finish_.resize(n);
}

double OwnerSimulator::makespan(const std::vector<int32_t>& owner, size_t clusterCount, std::vector<double>* start,
                                std::vector<double>* end) const
{
    free_.assign(clusterCount, 0.0);
    if (!threads_.empty())
        last_.assign(clusterCount, 1);
    if (start)
        start->assign(clusterCount, -1.0);
    double makespan = 0;
    for (InstanceId i : byRank_) {
        const int32_t c = owner[size_t(i)];
        double ready = free_[size_t(c)];
        for (size_t k = predStart_[size_t(i)]; k < predStart_[size_t(i) + 1]; ++k) {
            const InstanceId p = pred_[k];
            ready = std::max(ready, finish_[size_t(p)] + (owner[size_t(p)] == c ? 0.0 : edge_[k]));
        }
        double done = ready + cost_[size_t(i)];
        if (!threads_.empty() && threads_[size_t(i)] != last_[size_t(c)]) {
            done += switch_[size_t(i)];
            last_[size_t(c)] = threads_[size_t(i)];
        }
        finish_[size_t(i)] = done;
        free_[size_t(c)] = done;
        makespan = std::max(makespan, done);
        if (start && (*start)[size_t(c)] < 0)
            (*start)[size_t(c)] = ready;
    }
    if (end)
        *end = free_;
    return makespan;
}

}  // namespace ramiel
