#include "core/schedule/schedule.h"

#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <unordered_set>

namespace ramiel {

std::vector<int> SchedulingProblem::subBatches() const
{
    std::vector<int> sizes(static_cast<size_t>(degree), batch / degree);
    for (int j = 0; j < batch % degree; ++j)
        ++sizes[static_cast<size_t>(j)];
    return sizes;
}

void SchedulingProblem::check() const
{
    if (workers < 1)
        throw Error(ErrorKind::Usage, {}, "the number of workers (--cores) must be at least 1");
    if (batch < 1)
        throw Error(ErrorKind::Usage, {}, "the batch (--batch) must be at least 1");
    if (degree < 1 || degree > batch)
        throw Error(ErrorKind::Usage, {},
                    "the hypercluster degree (--degree) must be between 1 and the batch (" + std::to_string(batch) +
                        "), got " + std::to_string(degree));
}

size_t Schedule::cloneCount() const
{
    size_t items = 0;
    for (const auto& c : clusters)
        items += c.size();
    return items - std::min(items, instanceCount());
}

int Schedule::maxThreads() const
{
    int most = 1;
    for (size_t c = 0; c < clusters.size(); ++c)
        for (InstanceId i : clusters[c])
            most = std::max(most, threadsOf(c, i));
    return most;
}

int Schedule::cores() const
{
    int together = 0;
    for (size_t c = 0; c < clusters.size(); ++c)
        together += workerThreadsOf(c);
    return std::max({workers, together, maxThreads()});
}

std::string describeThreads(const Schedule& s)
{
    const size_t workers = s.clusters.size();
    std::vector<int> threads;
    for (size_t c = 0; c < workers; ++c)
        threads.push_back(s.workerThreadsOf(c));
    const bool same = std::all_of(threads.begin(), threads.end(), [&](int t) { return t == threads.front(); });
    std::string text = countOf(int(workers), "worker");
    if (same) {
        text += " x " + countOf(threads.empty() ? 1 : threads.front(), "thread");
    } else {
        std::string split;
        for (int t : threads)
            split += (split.empty() ? "" : "+") + std::to_string(t);
        text += " (" + split + " threads)";
    }
    // Items with their own count: the hybrid's serial parts, or per-node choices.
    int low = 0, high = 0;
    for (size_t c = 0; c < workers; ++c)
        for (InstanceId i : s.clusters[c])
            if (!s.threads.empty() && s.threads[size_t(i)] > 0) {
                const int t = s.threads[size_t(i)];
                low = low ? std::min(low, t) : t;
                high = std::max(high, t);
            }
    if (high > 0)
        text += low == high ? ", some nodes on " + std::to_string(high)
                            : ", nodes on " + std::to_string(low) + "-" + std::to_string(high);
    return text;
}

Schedule emptySchedule(const SchedulingProblem& p, const std::string& algorithm)
{
    p.check();
    Schedule s;
    s.algorithm = algorithm;
    s.workers = p.workers;
    s.batch = p.batch;
    s.degree = p.degree;
    s.subBatch = p.subBatches();
    s.nodesPerCopy = static_cast<int32_t>(p.nodeCount());
    const size_t total = p.nodeCount() * static_cast<size_t>(p.degree);
    s.owner.assign(total, 0);
    s.rank.resize(total);
    for (size_t i = 0; i < total; ++i) {
        const auto id = static_cast<InstanceId>(i);
        s.rank[i] = p.topo->position[static_cast<size_t>(s.node(id))] * p.degree + s.copy(id);
    }
    return s;
}

void clustersFromOwners(Schedule& s, int clusterCount)
{
    s.clusters.assign(static_cast<size_t>(clusterCount), {});
    for (size_t i = 0; i < s.owner.size(); ++i)
        s.clusters[static_cast<size_t>(s.owner[i])].push_back(static_cast<InstanceId>(i));
    normalizeClusters(s);
}

void normalizeClusters(Schedule& s)
{
    std::vector<int32_t> renumber(s.clusters.size(), -1);
    std::vector<std::vector<InstanceId>> kept;
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        if (s.clusters[c].empty())
            continue;
        renumber[c] = static_cast<int32_t>(kept.size());
        kept.push_back(std::move(s.clusters[c]));
    }
    for (auto& o : s.owner)
        o = renumber[static_cast<size_t>(o)];
    for (auto& items : kept)
        std::sort(items.begin(), items.end(), [&](InstanceId a, InstanceId b) { return s.rank[a] < s.rank[b]; });
    s.clusters = std::move(kept);
}

std::vector<CrossEdge> crossEdges(const Schedule& s, const CostTable& costs)
{
    const Topology& topo = costs.topology();
    std::vector<CrossEdge> out;
    std::unordered_set<InstanceId> local;
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        local.clear();
        local.insert(s.clusters[c].begin(), s.clusters[c].end());
        for (InstanceId v : s.clusters[c]) {
            const NodeId n = s.node(v);
            const auto& preds = topo.preds[static_cast<size_t>(n)];
            for (size_t k = 0; k < preds.size(); ++k) {
                const InstanceId p = s.instance(preds[k], s.copy(v));
                if (local.count(p))
                    continue;
                out.push_back({p, v, s.owner[static_cast<size_t>(p)], static_cast<int32_t>(c),
                               costs.edgeBytes(n, k) * s.samples(v), costs.predEdge(n, k, s.samples(v))});
            }
        }
    }
    return out;
}

std::vector<double> clusterLoads(const Schedule& s, const CostTable& costs)
{
    std::vector<double> loads;
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        double load = 0;
        for (InstanceId i : s.clusters[c])
            load += costs.node(s.node(i), s.samples(i), s.threadsOf(c, i));
        loads.push_back(load);
    }
    return loads;
}

}  // namespace ramiel
