// Whether a graph keeps its values finite: the test that lets a convolution whose
// oneDNN post-op turns NaN into a number (Relu, Clip) skip looking for NaN and
// infinity in its input on every run (the runtime's kernels_neural.cpp, the exported
// code's conv2d). A run's values are all finite when its inputs are, the graph keeps
// them so, and no arithmetic overflows float; the overflow is left out, as any float
// runtime leaves it to the model.
#pragma once

#include "core/ir/graph.h"

namespace ramiel {

// True when every node (no subgraphs) is of an operator that makes finite outputs of
// finite inputs, with finite float attributes, and every floating-point constant is
// finite. Division, roots, logarithms, powers, reciprocals and normalizations can make
// NaN or infinity of finite numbers, and graphs with them answer false.
bool keepsValuesFinite(const Graph& g);

}  // namespace ramiel
