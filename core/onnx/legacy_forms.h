// Operators whose meaning at an old opset differs from what the runtime, the passes and
// the code generators read, rewritten on import so that an old model computes what its
// operators meant:
// - broadcasting before opset 7: Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater
//   and Less with broadcast = 1 and an axis line B's dimensions up with A's from that
//   axis (B [3] on A [2, 3, 4, 5] at axis 1 is per channel). B gets trailing dimensions
//   of 1 (a reshaped copy of a constant, else an Unsqueeze node) and the axis goes;
// - PRelu before opset 7 applies a slope of C values per channel (axis 1), as PyTorch's
//   exporter and Caffe2 meant it; the slope gets trailing 1s the same way;
// - Concat before opset 4 joins along axis 1 when it names none: the axis is written out.
// A broadcast whose ranks are unknown keeps its axis, and validateNodes refuses it.
#pragma once

#include "core/ir/graph.h"

#include <string>

namespace ramiel {

// Rewrites `g` and its subgraphs. Node opsets must be set (checkSchemas).
void rewriteLegacyForms(Graph& g);

// Why `n` still broadcasts as before opset 7 (an axis that could not be rewritten);
// empty when it does not.
std::string legacyBroadcastProblem(const Graph& g, const Node& n);

}  // namespace ramiel
