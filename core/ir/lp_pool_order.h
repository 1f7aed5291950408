// LpPool's and GlobalLpPool's p: a float attribute before opset 2, an int since; 2 where the
// node gives none. The runtime's kernels and code generation read it here (and refuse one that
// is not a positive finite number).
#pragma once

#include "core/ir/graph.h"

namespace ramiel {

double lpPoolOrder(const Node& n);

}  // namespace ramiel
