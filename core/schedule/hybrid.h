// The hybrid of inter- and intra-operator parallelism (docs/scheduling.md, Hybrid schedules).
//
// A node is a *cut* when every other node is its ancestor or its descendant:
// while it runs nothing else can, so it may use every core. Only nodes that
// depend on a graph input count here: nodes computed from constants alone
// (torchvision's Identity on a weight, a Shape of a constant) are cheap and
// would otherwise make nothing a cut; they keep their place and one thread. Between two
// consecutive cuts lies a *stretch*, run either by the clusters (inter-op) or
// moved whole onto one worker whose nodes use every core (intra-op). Each run
// of consecutive cuts and each stretch, in order, is tried on one worker with
// `threads` intra-op threads (the cost table's measured cost at that count),
// and the change is kept when the simulated makespan drops. Last, the whole
// graph on one worker with `threads` threads (serial on every core) replaces
// the result unless the result simulates at least 5 % faster. Only for d = 1: the copies of a hyperclustered
// graph are never ordered against one another, so it has no cuts.
//
// Then the cores are divided among the branches that run side by side
// (splitCores): each item gets a share of the P cores in proportion to the work
// its worker has left before the next cut, against the other workers that still
// have work there; a branch that runs on after the others have finished takes
// every core (on P = 4: 2+2, then 3+1, then 4). The executors hold the sum of the
// threads of running items to at most P (an item starts on fewer when fewer are free).
#pragma once

#include "core/schedule/schedule.h"

#include <string>
#include <vector>

namespace ramiel {

struct HybridReport {
    int threads = 1;          // intra-op threads for the serial parts
    int cuts = 0;             // nodes every other node is ordered against (in chains of consecutive cuts)
    int stretches = 0;        // runs of other nodes between cuts
    int stretchesMoved = 0;   // moved whole onto one worker
    int threadedInstances = 0;
    int splitInstances = 0;   // items given a share of the cores beside other branches
    bool oneWorker = false;   // everything ended on one worker (serial on every core)
    double makespanBefore = 0;
    double makespanAfter = 0;
    std::string skipped;      // why nothing was tried, when so
    bool applied() const { return threadedInstances > 0 || splitInstances > 0; }
    // "12 nodes on 2 threads (3 cut nodes, 1 of 4 stretches onto one worker, 8 nodes given a share of the cores)"
    std::string summary() const;
};

// By node id: true for nodes that depend on a graph input.
std::vector<char> inputDependentNodes(const Graph& graph, const Topology& topo);

// By node id: true for the cuts among the nodes `among` marks. Empty for
// graphs above 20,000 nodes (the search keeps an ancestor bitset per node).
std::vector<char> cutNodes(const Topology& topo, const std::vector<char>& among);

// Divides the cores among concurrent branches (see above); returns the items
// changed, 0 when the split did not simulate faster and `s` is unchanged.
int splitCores(Schedule& s, const Graph& graph, const CostTable& costs, int cores);

// Turns `s` into a hybrid schedule for `threads` cores; `costs` must hold
// measured costs at that many threads (CostTable::setThreadedSeconds).
HybridReport makeHybrid(Schedule& s, const Graph& graph, const CostTable& costs, int threads);

}  // namespace ramiel
