// Hyperclustering: combine the clusters of d graph copies (one per
// sub-batch) into P hyperclusters.
#pragma once

#include "core/schedule/schedule.h"

#include <vector>

namespace ramiel {

// A copy's clusters, node lists in rank order, heaviest first.
using CopyClusters = std::vector<std::vector<NodeId>>;

struct HyperclusterReport {
    int swapsTried = 0;
    int swapsKept = 0;
};

// Fills `s` (from emptySchedule, degree d) from each copy's clusters.
// With switching, cluster i of copy j goes to hypercluster (i + j) mod P, so
// the copies' critical paths land on different workers, and then pairs of
// (copy, cluster) units on the busiest worker are swapped with units elsewhere
// while the simulated makespan drops (at most `swapBudget` simulations).
// Without switching cluster i of every copy goes to hypercluster i mod P.
HyperclusterReport combineCopies(Schedule& s, const CostTable& costs, const std::vector<CopyClusters>& perCopy,
                                 bool switching, int swapBudget = 400);

}  // namespace ramiel
