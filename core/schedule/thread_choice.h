// Intra-op thread counts for one worker's items, chosen together.
//
// Each item on the count that is cheapest for itself is not the cheapest
// sequence: every change of count costs a switch (threads wake, inputs
// move between caches; CostTable::threadSwitch), often more than a small node
// gains. `chooseThreads` minimises the sum of the items' costs and the switches
// by dynamic programming over the counts 1..most, in O(items x most).
#pragma once

#include "core/schedule/cost_table.h"

#include <vector>

namespace ramiel {

struct ThreadChoiceItem {
    NodeId node = 0;
    int samples = 1;
    int most = 1;  // the item may use 1..most threads
};

// The count for each item, in order, for a worker that starts on `startThreads`.
std::vector<int> chooseThreads(const std::vector<ThreadChoiceItem>& items, const CostTable& costs, int startThreads);

}  // namespace ramiel
