// Cluster merging: reduce a schedule's clusters to at most P, checking every
// merge with the simulator.
#pragma once

#include "core/schedule/schedule.h"

#include <utility>
#include <vector>

namespace ramiel {

struct MergeReport {
    int freeMerges = 0;    // clusters whose busy intervals did not overlap
    int guidedMerges = 0;  // lightest cluster into the best partner
    int rejected = 0;      // free-merge candidates the simulator turned down
    // Every merge in the order it was made: cluster `from` joined the group
    // holding cluster `into` (indices into the clusters given to mergeClusters).
    std::vector<std::pair<int32_t, int32_t>> steps;
};

// First the free merges: clusters whose busy intervals in the simulated
// schedule (each cluster on its own core) do not overlap share a core, if the
// simulated makespan does not grow (checked for all of them at once, else
// lane by lane, else one by one). Then, while more than `limit` remain, the
// lightest cluster joins the one that gives the smallest simulated makespan
// (all partners are tried when at most 17 clusters are left, else the 8 (over
// 64 clusters: 2) whose busy intervals overlap it least). Finally, merges that
// still lower the makespan are made, possibly down to one cluster: a graph
// whose hand-offs cost more than its parallelism saves runs serially.
// `s` must have no clones.
MergeReport mergeClusters(Schedule& s, const CostTable& costs, int limit);

// Moves every item of cluster `from` into cluster `into` (kept in rank order);
// `from` is left empty. Call normalizeClusters() when done.
void mergeInto(Schedule& s, size_t from, size_t into);

}  // namespace ramiel
