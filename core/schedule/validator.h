// Checks a schedule against the rules that make it correct and deadlock-free.
#pragma once

#include "core/schedule/schedule.h"

#include <string>
#include <vector>

namespace ramiel {

struct Validation {
    bool valid = true;
    size_t clones = 0;                  // items that are clones (allowed, reported)
    std::vector<std::string> problems;  // empty when valid (the first 20)
};

// - at most P clusters; every instance's owner holds it exactly once; other
//   clusters hold it at most once, as a clone;
// - `rank` is a permutation and a topological order of the instances;
// - every cluster runs its items in strictly increasing rank (the global-order
//   rule: a consumer only waits for lower-ranked values, published once by
//   their owner, so no cycle of waits can form).
Validation validate(const Schedule& s, const Topology& topo);

}  // namespace ramiel
