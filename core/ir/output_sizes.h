// What decides an operator's output sizes besides its inputs' sizes: the values of
// some inputs (a Reshape's target, a Resize's sizes, a TopK's k), or the data itself
// (how many elements NonZero finds). The fold-constants pass and the graph metrics
// read these.
#pragma once

#include "core/ir/graph.h"

#include <string>
#include <vector>

namespace ramiel {

// The inputs whose values decide the output sizes (with the sizes of the others), or
// null where only sizes do. Inputs that are attributes at older opsets are absent.
const std::vector<size_t>* sizeDecidingInputs(const Node& n);

// Whether the output sizes depend on the data whatever is constant: NonZero's count,
// NonMaxSuppression's boxes kept, Unique, Compress, and control flow (If, Loop, Scan).
bool sizesFollowTheData(const Node& n);

}  // namespace ramiel
