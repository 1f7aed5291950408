// Cloning: a cheap instance whose output feeds other clusters is computed
// again inside each consumer cluster, so they no longer wait on its owner.
#pragma once

#include "core/schedule/schedule.h"

namespace ramiel {

struct CloneReport {
    int clones = 0;
    int crossEdgesBefore = 0;
    int crossEdgesAfter = 0;
    int crossEdgesRemoved() const { return crossEdgesBefore - crossEdgesAfter; }
};

// Candidates, in rank order (so chains of cheap nodes clone transitively):
// instance u, consumer cluster X that does not hold u, when u costs less than
// the hand-off it saves and every predecessor of u is already in X (or u has
// none: it reads only graph inputs and constants). Each clone is kept only if
// the simulated makespan does not grow.
CloneReport cloneCheapNodes(Schedule& s, const CostTable& costs);

}  // namespace ramiel
