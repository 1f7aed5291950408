#include "core/ir/topology.h"

#include "core/util/error.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ramiel {

namespace {

// Names the nodes of one cycle among nodes that Kahn's algorithm left over
// (each of them has an unsorted predecessor, so walking back must repeat).
std::string describeCycle(const Graph& graph, const std::vector<std::vector<NodeId>>& preds,
                          const std::vector<int32_t>& position)
{
    NodeId start = kNone;
    for (size_t i = 0; i < position.size(); ++i)
        if (position[i] < 0) {
            start = static_cast<NodeId>(i);
            break;
        }
    std::vector<int> seenAt(position.size(), -1);
    std::vector<NodeId> walk;
    NodeId n = start;
    while (seenAt[n] < 0) {
        seenAt[n] = static_cast<int>(walk.size());
        walk.push_back(n);
        NodeId next = kNone;
        for (NodeId p : preds[n])
            if (position[p] < 0) {
                next = p;
                break;
            }
        n = next;
    }
    std::vector<NodeId> cycle(walk.begin() + seenAt[n], walk.end());
    std::reverse(cycle.begin(), cycle.end());  // walked backwards: print in data-flow order
    std::string s;
    const size_t limit = 8;
    for (size_t i = 0; i < cycle.size() && i < limit; ++i)
        s += "'" + graph.node(cycle[i]).name + "' -> ";
    if (cycle.size() > limit)
        s += "... -> ";
    s += "'" + graph.node(cycle.front()).name + "'";
    return s;
}

}  // namespace

int32_t Topology::depth() const
{
    int32_t d = 0;
    for (int32_t l : level)
        d = std::max(d, l + 1);
    return d;
}

int32_t Topology::width() const
{
    std::vector<int32_t> count(static_cast<size_t>(depth()), 0);
    for (int32_t l : level)
        ++count[static_cast<size_t>(l)];
    return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

Topology buildTopology(const Graph& graph)
{
    const size_t n = graph.nodeCount();
    Topology t;
    t.preds.resize(n);
    t.succs.resize(n);
    t.position.assign(n, -1);
    t.level.assign(n, 0);
    std::vector<int32_t> missing(n, 0);
    for (size_t i = 0; i < n; ++i) {
        t.preds[i] = graph.predecessors(static_cast<NodeId>(i));
        missing[i] = static_cast<int32_t>(t.preds[i].size());
        for (NodeId p : t.preds[i])
            t.succs[static_cast<size_t>(p)].push_back(static_cast<NodeId>(i));
        t.edgeCount += t.preds[i].size();
    }

    std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
        if (missing[i] == 0)
            ready.push(static_cast<NodeId>(i));
    t.order.reserve(n);
    while (!ready.empty()) {
        NodeId u = ready.top();
        ready.pop();
        t.position[u] = static_cast<int32_t>(t.order.size());
        t.order.push_back(u);
        for (NodeId v : t.succs[u]) {
            t.level[v] = std::max(t.level[v], t.level[u] + 1);
            if (--missing[v] == 0)
                ready.push(v);
        }
    }
    if (t.order.size() != n)
        throw Error(ErrorKind::InvalidGraph, {}, "graph has a cycle: " + describeCycle(graph, t.preds, t.position));

    auto byPosition = [&](NodeId a, NodeId b) { return t.position[a] < t.position[b]; };
    for (size_t i = 0; i < n; ++i) {
        std::sort(t.preds[i].begin(), t.preds[i].end(), byPosition);
        std::sort(t.succs[i].begin(), t.succs[i].end(), byPosition);
    }
    return t;
}

}  // namespace ramiel
