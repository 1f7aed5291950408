// The comparison schedulers: DSC and HEFT over all node instances.
#pragma once

#include "core/schedule/schedule.h"

namespace ramiel {

// Dominant-sequence clustering (Yang & Gerasoulis 1994), the DSC-I form:
// examine free nodes by priority t-level + b-level; put each at the end of the
// predecessor cluster that lets it start earliest, if that beats starting in
// a cluster of its own. Gives unboundedly many clusters (merge afterwards).
// The global order is the simulated start order.
Schedule dscSchedule(const SchedulingProblem& p);

// HEFT (Topcuoglu, Hariri & Wu 2002) on P identical workers: nodes by
// decreasing upward rank, each on the worker that finishes it earliest, with
// insertion into idle gaps. Gives at most P clusters.
Schedule heftSchedule(const SchedulingProblem& p);

}  // namespace ramiel
