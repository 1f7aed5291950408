// A parallel schedule: clusters of node instances, one cluster per worker.
//
// With hyperclustering the graph is copied d times, copy j working on
// subBatch[j] samples; instance i is node (i % nodes) of copy (i / nodes).
// Every instance has one owner cluster that computes it and publishes its
// outputs; another cluster may hold a clone, which it computes for itself and
// never publishes. Every cluster runs its items in increasing `rank`, one
// global topological order of all instances: a consumer only ever waits for a
// value of lower rank, which is published once, so no schedule that passes
// validate() can deadlock.
#pragma once

#include "core/schedule/cost_table.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ramiel {

using InstanceId = int32_t;

struct SchedulingProblem {
    const Graph* graph = nullptr;
    const Topology* topo = nullptr;
    const CostTable* costs = nullptr;
    int workers = 2;     // P
    int batch = 1;       // B, in samples
    int degree = 1;      // d: sub-batches (graph copies), 1 <= d <= B
    bool clone = true;   // run the cloning step
    bool switching = true;  // hypercluster switching (linear, d > 1)
    int hybridThreads = 1;  // > 1: serial parts get this many intra-op threads (hybrid.h)

    static SchedulingProblem of(const Graph& graph, const Topology& topo, const CostTable& costs, int workers,
                                int batch = 1, int degree = 1)
    {
        SchedulingProblem p;
        p.graph = &graph;
        p.topo = &topo;
        p.costs = &costs;
        p.workers = workers;
        p.batch = batch;
        p.degree = degree;
        return p;
    }

    size_t nodeCount() const { return topo->nodeCount(); }
    // Samples per copy: d parts summing to B, the first B mod d one larger.
    std::vector<int> subBatches() const;
    // Throws Error(Usage) for P < 1, B < 1, d outside [1, B].
    void check() const;
};

struct Schedule {
    std::string algorithm;
    int workers = 1;
    int batch = 1;
    int degree = 1;
    std::vector<int> subBatch;   // samples per copy
    int32_t nodesPerCopy = 0;
    std::vector<std::vector<InstanceId>> clusters;  // cluster i runs on worker i, in rank order
    std::vector<int32_t> owner;  // by instance
    std::vector<int32_t> rank;   // by instance: position in the global order
    // By instance: intra-op threads (hybrid schedules, per-node choices), 0 for
    // "as the worker has them" (costed at the worker's count); empty: 0 each.
    std::vector<int32_t> threads;
    // By cluster: the intra-op threads its worker starts each run with; empty: 1 each.
    std::vector<int32_t> workerThreads;

    NodeId node(InstanceId i) const { return i % nodesPerCopy; }
    int copy(InstanceId i) const { return i / nodesPerCopy; }
    int samples(InstanceId i) const { return subBatch[static_cast<size_t>(copy(i))]; }
    InstanceId instance(NodeId n, int copyIndex) const { return copyIndex * nodesPerCopy + n; }
    // The intra-op threads `cluster`'s worker starts each run with.
    int workerThreadsOf(size_t cluster) const
    {
        return cluster < workerThreads.size() ? std::max(1, int(workerThreads[cluster])) : 1;
    }
    // Intra-op threads of instance i where `cluster` runs it.
    int threadsOf(size_t cluster, InstanceId i) const
    {
        const int32_t own = threads.empty() ? 0 : threads[static_cast<size_t>(i)];
        return own > 0 ? own : workerThreadsOf(cluster);
    }
    // ... where its owner runs it.
    int threadsOf(InstanceId i) const { return threadsOf(size_t(owner[static_cast<size_t>(i)]), i); }
    // The most intra-op threads any item uses.
    int maxThreads() const;
    // The cores it is planned for: P, the workers' threads together, or one item's most.
    int cores() const;
    size_t instanceCount() const { return owner.size(); }
    size_t cloneCount() const;  // items beyond one per instance
    bool isClone(size_t cluster, InstanceId i) const { return owner[static_cast<size_t>(i)] != int32_t(cluster); }
};

// Workers and threads: "1 worker x 2 threads", "2 workers x 1 thread",
// "2 workers (3+1 threads)", with ", nodes on 1-2" where items have their own counts.
std::string describeThreads(const Schedule& s);

// An empty schedule for a problem: sizes, sub-batches and the default rank
// (by the node's topological position, then copy). No clusters yet.
Schedule emptySchedule(const SchedulingProblem& problem, const std::string& algorithm);

// Rebuilds `clusters` from `owner` (every instance once, in rank order); clones are dropped.
void clustersFromOwners(Schedule& s, int clusterCount);

// Sorts each cluster by rank and drops clusters that became empty, renumbering owners.
void normalizeClusters(Schedule& s);

struct CrossEdge {
    InstanceId from = 0;  // owned by fromCluster, published
    InstanceId to = 0;    // computed in toCluster
    int32_t fromCluster = 0;
    int32_t toCluster = 0;
    double bytes = 0;
    double cost = 0;
};

// Every dependency between an item and a predecessor its cluster does not hold.
std::vector<CrossEdge> crossEdges(const Schedule& s, const CostTable& costs);

// Load of each cluster: the summed cost of its items.
std::vector<double> clusterLoads(const Schedule& s, const CostTable& costs);

}  // namespace ramiel
