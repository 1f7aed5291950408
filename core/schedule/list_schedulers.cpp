#include "core/schedule/list_schedulers.h"

#include <algorithm>
#include <numeric>
#include <queue>

namespace ramiel {

namespace {

// Sets rank from start times (ties: the default rank), a topological order
// because every instance starts after its predecessors end.
void rankByStart(Schedule& s, const std::vector<double>& start)
{
    std::vector<InstanceId> order(s.instanceCount());
    std::iota(order.begin(), order.end(), 0);
    const std::vector<int32_t> base = s.rank;
    std::sort(order.begin(), order.end(), [&](InstanceId a, InstanceId b) {
        return start[size_t(a)] != start[size_t(b)] ? start[size_t(a)] < start[size_t(b)] : base[size_t(a)] < base[size_t(b)];
    });
    for (size_t r = 0; r < order.size(); ++r)
        s.rank[size_t(order[r])] = int32_t(r);
}

// When all of v's inputs can be in place on `place` (a cluster or worker):
// a predecessor placed there is ready at its finish, any other one hands off.
// kNone as `place` gives the start of v alone, every input handed off.
double dataReady(const Schedule& s, const CostTable& costs, InstanceId v, const std::vector<double>& finish,
                 const std::vector<int32_t>& placement, int32_t place)
{
    const NodeId n = s.node(v);
    const auto& preds = costs.topology().preds[size_t(n)];
    double t = 0;
    for (size_t k = 0; k < preds.size(); ++k) {
        const InstanceId p = s.instance(preds[k], s.copy(v));
        t = std::max(t, finish[size_t(p)] + (placement[size_t(p)] == place ? 0.0 : costs.predEdge(n, k, s.samples(v))));
    }
    return t;
}

// b-level of every instance with all edges cut (edge costs counted).
std::vector<double> blevels(const Schedule& s, const CostTable& costs)
{
    const Topology& topo = costs.topology();
    std::vector<double> b(s.instanceCount(), 0.0);
    for (int j = 0; j < s.degree; ++j) {
        const int samples = s.subBatch[size_t(j)];
        for (auto it = topo.order.rbegin(); it != topo.order.rend(); ++it) {
            const NodeId n = *it;
            double tail = 0;
            for (NodeId succ : topo.succs[size_t(n)]) {
                const double c = costs.edge(n, succ, samples);
                tail = std::max(tail, c + b[size_t(s.instance(succ, j))]);
            }
            b[size_t(s.instance(n, j))] = costs.node(n, samples) + tail;
        }
    }
    return b;
}

}  // namespace

Schedule dscSchedule(const SchedulingProblem& p)
{
    Schedule s = emptySchedule(p, "dsc");
    const CostTable& costs = *p.costs;
    const Topology& topo = *p.topo;
    const size_t total = s.instanceCount();
    const std::vector<double> blevel = blevels(s, costs);
    std::vector<double> start(total, 0), finish(total, 0);
    std::vector<int32_t> cluster(total, -1);
    std::vector<double> clusterReady;
    std::vector<int> unscheduledPreds(total, 0);

    using Item = std::pair<double, int32_t>;  // (-priority, rank): max priority, then earliest rank
    std::priority_queue<Item, std::vector<Item>, std::greater<>> free;
    auto tlevelAlone = [&](InstanceId v) { return dataReady(s, costs, v, finish, cluster, kNone); };
    std::vector<InstanceId> byRank(total);
    for (size_t i = 0; i < total; ++i) {
        unscheduledPreds[i] = int(topo.preds[size_t(s.node(InstanceId(i)))].size());
        byRank[size_t(s.rank[i])] = InstanceId(i);
    }
    for (size_t i = 0; i < total; ++i)
        if (unscheduledPreds[i] == 0)
            free.push({-blevel[i], s.rank[i]});

    while (!free.empty()) {
        const InstanceId v = byRank[size_t(free.top().second)];
        free.pop();
        const NodeId n = s.node(v);
        const int copy = s.copy(v);
        const auto& preds = topo.preds[size_t(n)];
        const double alone = tlevelAlone(v);
        // Try the end of each predecessor's cluster.
        int32_t bestCluster = -1;
        double bestStart = alone;
        for (size_t k = 0; k < preds.size(); ++k) {
            const int32_t c = cluster[size_t(s.instance(preds[k], copy))];
            const double t = std::max(clusterReady[size_t(c)], dataReady(s, costs, v, finish, cluster, c));
            if (t < bestStart || (t <= bestStart && bestCluster < 0)) {
                bestStart = t;
                bestCluster = c;
            }
        }
        if (bestCluster < 0) {
            bestCluster = int32_t(clusterReady.size());
            clusterReady.push_back(0);
        }
        cluster[size_t(v)] = bestCluster;
        start[size_t(v)] = bestStart;
        finish[size_t(v)] = bestStart + costs.node(n, s.samples(v));
        clusterReady[size_t(bestCluster)] = finish[size_t(v)];
        for (NodeId succ : topo.succs[size_t(n)]) {
            const InstanceId w = s.instance(succ, copy);
            if (--unscheduledPreds[size_t(w)] == 0)
                free.push({-(tlevelAlone(w) + blevel[size_t(w)]), s.rank[size_t(w)]});
        }
    }
    rankByStart(s, start);
    s.owner = cluster;
    clustersFromOwners(s, int(clusterReady.size()));
    return s;
}

Schedule heftSchedule(const SchedulingProblem& p)
{
    Schedule s = emptySchedule(p, "heft");
    const CostTable& costs = *p.costs;
    const size_t total = s.instanceCount();
    const std::vector<double> upward = blevels(s, costs);
    std::vector<InstanceId> order(total);
    std::iota(order.begin(), order.end(), 0);
    // Decreasing upward rank is a topological order when costs are positive;
    // ties (zero-cost nodes) fall back to the default rank, also topological.
    std::sort(order.begin(), order.end(), [&](InstanceId a, InstanceId b) {
        return upward[size_t(a)] != upward[size_t(b)] ? upward[size_t(a)] > upward[size_t(b)]
                                                      : s.rank[size_t(a)] < s.rank[size_t(b)];
    });

    std::vector<double> start(total, 0), finish(total, 0);
    std::vector<int32_t> worker(total, 0);
    std::vector<std::vector<std::pair<double, double>>> busy(size_t(p.workers));  // sorted intervals
    for (InstanceId v : order) {
        const NodeId n = s.node(v);
        const double w = costs.node(n, s.samples(v));
        double bestFinish = -1, bestStart = 0;
        int bestWorker = 0;
        for (int q = 0; q < p.workers; ++q) {
            const double ready = dataReady(s, costs, v, finish, worker, q);
            // Earliest gap of length w at or after `ready`.
            double t = ready;
            for (const auto& [b, e] : busy[size_t(q)]) {
                if (t + w <= b)
                    break;
                t = std::max(t, e);
            }
            if (bestFinish < 0 || t + w < bestFinish) {
                bestFinish = t + w;
                bestStart = t;
                bestWorker = q;
            }
        }
        start[size_t(v)] = bestStart;
        finish[size_t(v)] = bestFinish;
        worker[size_t(v)] = bestWorker;
        auto& iv = busy[size_t(bestWorker)];
        iv.insert(std::upper_bound(iv.begin(), iv.end(), std::make_pair(bestStart, bestFinish)), {bestStart, bestFinish});
    }
    rankByStart(s, start);
    s.owner = worker;
    clustersFromOwners(s, p.workers);
    return s;
}

}  // namespace ramiel
