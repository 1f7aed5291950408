// Which values of a graph stay finite when its inputs are: the test that lets a
// convolution whose oneDNN post-op turns NaN into a number (Relu, Clip) skip looking
// for NaN and infinity in its input on every run (the runtime's kernels_convolution.cpp),
// and that decides where the exported code fuses a Relu (lowering.cpp). Arithmetic
// that overflows float is left out, as any float runtime leaves it to the model.
#pragma once

#include "core/ir/graph.h"

namespace ramiel {

// By value id: whether the value is finite whenever the graph's inputs are. True for
// the inputs (not for a subgraph's outer values), for constants whose data is finite,
// and for the outputs of a node of an operator that makes finite outputs of finite
// inputs, with finite float attributes, whose inputs all are (a division by a constant
// without zeros included). Other divisions, roots, logarithms, powers, reciprocals,
// normalizations and subgraphs can make NaN or infinity of finite numbers: their
// outputs, and what is computed from them, are false.
std::vector<bool> finiteWithInputs(const Graph& g);

// Whether every value node n reads is so (`finite` from finiteWithInputs).
bool readsFiniteValues(const Node& n, const std::vector<bool>& finite);

}  // namespace ramiel
