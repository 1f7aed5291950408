#include "core/schedule/hybrid.h"

#include "core/schedule/simulator.h"

#include <algorithm>
#include <cstdint>

namespace ramiel {

namespace {

constexpr size_t kMaxCutSearchNodes = 20000;
constexpr double kInterOpMargin = 0.95;  // inter-op stretches must simulate 5 % faster than one worker

// For each node, how many nodes `among` reach it (along `edges`, visited in `order`).
std::vector<size_t> reachCounts(const std::vector<NodeId>& order, const std::vector<std::vector<NodeId>>& edges,
                                const std::vector<char>& among)
{
    const size_t n = among.size();
    const size_t words = (n + 63) / 64;
    std::vector<uint64_t> bits(n * words, 0);
    std::vector<size_t> count(n, 0);
    for (NodeId v : order) {
        uint64_t* mine = &bits[size_t(v) * words];
        for (NodeId p : edges[size_t(v)]) {
            const uint64_t* theirs = &bits[size_t(p) * words];
            for (size_t w = 0; w < words; ++w)
                mine[w] |= theirs[w];
            if (among[size_t(p)])
                mine[size_t(p) / 64] |= uint64_t(1) << (size_t(p) % 64);
        }
        for (size_t w = 0; w < words; ++w)
            count[size_t(v)] += size_t(__builtin_popcountll(mine[w]));
    }
    return count;
}

// Moves `instances` onto cluster `target` (dropping every clone of them), each
// on `threads` intra-op threads.
void moveOnto(Schedule& s, const std::vector<InstanceId>& instances, int32_t target, int threads)
{
    std::vector<char> moving(s.instanceCount(), 0);
    for (InstanceId i : instances)
        moving[size_t(i)] = 1;
    for (auto& items : s.clusters)
        items.erase(std::remove_if(items.begin(), items.end(), [&](InstanceId i) { return moving[size_t(i)] != 0; }),
                    items.end());
    for (InstanceId i : instances) {
        s.owner[size_t(i)] = target;
        s.clusters[size_t(target)].push_back(i);
        s.threads[size_t(i)] = threads;
    }
    normalizeClusters(s);
}

}  // namespace

std::vector<char> inputDependentNodes(const Graph& graph, const Topology& topo)
{
    std::vector<char> dependent(topo.nodeCount(), 0);
    for (NodeId v : topo.order) {
        char& d = dependent[size_t(v)];
        for (ValueId in : graph.node(v).inputs)
            if (in != kNone && !graph.value(in).isConstant() && graph.value(in).producer == kNone)
                d = 1;
        for (NodeId p : topo.preds[size_t(v)])
            d = d || dependent[size_t(p)];
    }
    return dependent;
}

std::vector<char> cutNodes(const Topology& topo, const std::vector<char>& among)
{
    const size_t n = topo.nodeCount();
    if (n == 0 || n > kMaxCutSearchNodes)
        return {};
    const size_t members = size_t(std::count(among.begin(), among.end(), 1));
    const std::vector<size_t> ancestors = reachCounts(topo.order, topo.preds, among);
    const std::vector<NodeId> reverse(topo.order.rbegin(), topo.order.rend());
    const std::vector<size_t> descendants = reachCounts(reverse, topo.succs, among);
    std::vector<char> cut(n, 0);
    for (size_t v = 0; v < n; ++v)
        cut[v] = among[v] && ancestors[v] + descendants[v] == members - 1;
    return cut;
}

HybridReport makeHybrid(Schedule& s, const Graph& graph, const CostTable& costs, int threads)
{
    HybridReport r;
    r.threads = threads;
    r.makespanBefore = r.makespanAfter = simulateMakespan(s, costs);
    if (threads <= 1) {
        r.skipped = "one core";
        return r;
    }
    if (s.degree != 1) {
        r.skipped = "graph copies (d > 1) run side by side, nothing is serial";
        return r;
    }
    if (costs.threadedCount() != threads) {
        r.skipped = "no measured costs on " + std::to_string(threads) + " intra-op threads";
        return r;
    }
    const Topology& topo = costs.topology();
    const std::vector<char> dependent = inputDependentNodes(graph, topo);
    const std::vector<char> cut = cutNodes(topo, dependent);
    if (cut.empty()) {
        r.skipped = "more than 20,000 nodes";
        return r;
    }
    // Nodes computed from constants alone keep whatever threads their worker has (0).
    s.threads.assign(s.instanceCount(), 0);
    for (size_t i = 0; i < s.instanceCount(); ++i)
        if (dependent[size_t(s.node(InstanceId(i)))])
            s.threads[i] = 1;
    double best = r.makespanBefore;
    auto attempt = [&](const std::vector<InstanceId>& instances, int32_t target) {
        Schedule candidate = s;
        moveOnto(candidate, instances, target, threads);
        const double makespan = simulateMakespan(candidate, costs);
        if (makespan >= best * (1 - 1e-6))
            return false;
        best = makespan;
        s = std::move(candidate);
        return true;
    };
    std::vector<NodeId> order;  // the input-dependent nodes, in topological order
    for (NodeId v : topo.order)
        if (dependent[size_t(v)])
            order.push_back(v);
    // Units in order: a run of consecutive cuts (a chain: nothing beside it), or
    // a stretch between cuts. Each is tried whole, so a worker does not switch
    // thread counts node by node.
    for (size_t i = 0; i < order.size();) {
        const bool chain = cut[size_t(order[i])] != 0;
        size_t j = i;
        std::vector<InstanceId> unit;
        while (j < order.size() && (cut[size_t(order[j])] != 0) == chain)
            unit.push_back(InstanceId(order[j++]));
        if (chain)
            r.cuts += int(unit.size());
        else
            ++r.stretches;
        // Onto the worker that holds the node before it (no hand-off in), else the one after.
        const int32_t target = i > 0 ? s.owner[size_t(order[i - 1])]
                               : j < order.size() ? s.owner[size_t(order[j])]
                                                  : s.owner[size_t(order[i])];
        if (attempt(unit, target) && !chain)
            ++r.stretchesMoved;
        i = j;
    }
    // The whole graph on one worker with every core is the serial run on P
    // threads. Inter-op stretches are kept only when they beat it clearly: the
    // simulation of workers side by side is the least certain part (measured
    // within 5-20 % on a shared 2-core machine), a single worker's is not.
    if (!order.empty() && r.stretchesMoved < r.stretches) {
        Schedule one = s;
        moveOnto(one, std::vector<InstanceId>(order.begin(), order.end()), s.owner[size_t(order.front())], threads);
        const double makespan = simulateMakespan(one, costs);
        if (best > kInterOpMargin * makespan) {
            r.stretchesMoved = r.stretches;
            r.oneWorker = true;
            best = makespan;
            s = std::move(one);
        }
    }
    for (int32_t t : s.threads)
        r.threadedInstances += t > 1;
    if (r.threadedInstances == 0)
        s.threads.clear();
    r.makespanAfter = best;
    return r;
}

}  // namespace ramiel
