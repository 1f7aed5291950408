#include "core/schedule/hybrid.h"

#include "core/schedule/simulator.h"
#include "core/schedule/thread_choice.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

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

// `cores` divided among the workers with work left (> 0) in proportion to it, at
// least one each, the rest by largest remainder; 0 for workers with none.
std::vector<int> apportion(const std::vector<double>& left, int cores)
{
    std::vector<int> share(left.size(), 0);
    const double total = std::accumulate(left.begin(), left.end(), 0.0);
    int given = 0;
    for (size_t w = 0; w < left.size(); ++w)
        if (left[w] > 0)
            given += share[w] = 1;
    for (; given < cores && total > 0; ++given) {
        size_t pick = 0;
        double worst = -1e300;
        for (size_t w = 0; w < left.size(); ++w) {
            const double deficit = left[w] / total * cores - share[w];
            if (left[w] > 0 && deficit > worst) {
                worst = deficit;
                pick = w;
            }
        }
        ++share[pick];
    }
    return share;
}

// One worker's items in start order, with the one-thread cost summed before each.
struct Timeline {
    std::vector<double> start, end, before;  // before[k]: one-thread cost of items 0..k-1
    // One-thread work of the items that end after t and start before `until`,
    // less the part of a running item that is done.
    double left(double t, double until) const
    {
        const size_t a = size_t(std::upper_bound(end.begin(), end.end(), t) - end.begin());
        const size_t b = size_t(std::lower_bound(start.begin(), start.end(), until) - start.begin());
        if (a >= b)
            return 0;
        double work = before[b] - before[a];
        if (start[a] < t && end[a] > start[a])
            work -= (before[a + 1] - before[a]) * (t - start[a]) / (end[a] - start[a]);
        return work;
    }
};

}  // namespace

std::string HybridReport::summary() const
{
    std::string text = std::to_string(threadedInstances) + " nodes on " + std::to_string(threads) + " threads (" +
                       std::to_string(cuts) + " cut nodes, " + std::to_string(stretchesMoved) + " of " +
                       std::to_string(stretches) + " stretches onto one worker";
    if (splitInstances > 0)
        text += ", " + std::to_string(splitInstances) + " nodes given a share of the cores beside other branches";
    return text + (oneWorker ? "; all on one worker: serial on every core)" : ")");
}

int splitCores(Schedule& s, const Graph& graph, const CostTable& costs, int cores)
{
    const size_t k = s.clusters.size();
    if (cores < 2 || k < 2 || s.degree != 1)
        return 0;
    const Topology& topo = costs.topology();
    const std::vector<char> dependent = inputDependentNodes(graph, topo);
    const std::vector<char> cut = cutNodes(topo, dependent);
    if (cut.empty())
        return 0;
    const double before = simulateMakespan(s, costs);
    Schedule current = s;
    if (current.threads.empty())
        current.threads.assign(current.instanceCount(), 0);
    Schedule best = current;
    double bestMakespan = before;
    // Each round plans from the previous round's timeline: shares move the items.
    for (int round = 0; round < 4; ++round) {
        const Simulation sim = simulate(current, costs, true);
        std::vector<double> cutStarts;
        std::vector<Timeline> lines(k);
        for (const GanttEntry& g : sim.gantt) {
            const NodeId n = s.node(g.instance);
            if (!g.clone && cut[size_t(n)])
                cutStarts.push_back(g.start);
            Timeline& line = lines[size_t(g.worker)];
            if (line.before.empty())
                line.before.push_back(0);
            line.start.push_back(g.start);
            line.end.push_back(g.end);
            line.before.push_back(line.before.back() + costs.node(n, s.samples(g.instance), 1));
        }
        std::sort(cutStarts.begin(), cutStarts.end());
        Schedule next = current;
        std::vector<double> left(k);
        std::vector<std::vector<InstanceId>> shared(k);  // by worker, in order: the items given a share
        std::vector<std::vector<ThreadChoiceItem>> choices(k);
        for (const GanttEntry& g : sim.gantt) {
            const NodeId n = s.node(g.instance);
            if (g.clone || !dependent[size_t(n)])
                continue;
            int share = cores;  // a cut runs alone
            if (!cut[size_t(n)]) {
                const auto nextCut = std::upper_bound(cutStarts.begin(), cutStarts.end(), g.start);
                const double until = nextCut == cutStarts.end() ? sim.makespan + 1 : *nextCut;
                for (size_t w = 0; w < k; ++w)
                    left[w] = lines[w].left(g.start, until);
                share = apportion(left, cores)[size_t(g.worker)];
            }
            shared[size_t(g.worker)].push_back(g.instance);
            choices[size_t(g.worker)].push_back({n, s.samples(g.instance), std::max(1, share)});
        }
        for (size_t w = 0; w < k; ++w) {
            const int start = s.workerThreadsOf(w);
            const std::vector<int> chosen = chooseThreads(choices[w], costs, start);
            for (size_t j = 0; j < chosen.size(); ++j)
                next.threads[size_t(shared[w][j])] = chosen[j];
        }
        const double makespan = simulateMakespan(next, costs);
        if (makespan < bestMakespan) {
            bestMakespan = makespan;
            best = next;
        }
        current = std::move(next);
    }
    if (bestMakespan >= before * 0.99)
        return 0;
    int changed = 0;
    for (size_t i = 0; i < s.instanceCount(); ++i)
        changed += best.threadsOf(InstanceId(i)) != s.threadsOf(InstanceId(i));
    s = std::move(best);
    return changed;
}

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
    const Schedule original = s;
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
    // Cores divided among the branches that run side by side, from the schedule
    // as planned and from the one with stretches moved: the faster stays.
    {
        Schedule fromMoves = s, fromPlan = original;
        const int a = splitCores(fromMoves, graph, costs, threads);
        const int b = splitCores(fromPlan, graph, costs, threads);
        const double ma = a ? simulateMakespan(fromMoves, costs) : best;
        const double mb = b ? simulateMakespan(fromPlan, costs) : best;
        if (b && mb < ma && mb < best) {
            s = std::move(fromPlan);
            best = mb;
            r.splitInstances = b;
            r.stretchesMoved = 0;
        } else if (a && ma < best) {
            s = std::move(fromMoves);
            best = ma;
            r.splitInstances = a;
        }
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
            r.splitInstances = 0;
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
