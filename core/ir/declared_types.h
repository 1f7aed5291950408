// What a run computed against what the model declares. ONNX's shape inference
// stops at a node whose result contradicts the declared type of its output, so
// the contradiction shows only when the model runs: ONNX Runtime warns then,
// and so does `ramiel run`.
#pragma once

#include "core/ir/graph.h"

#include <string>
#include <vector>

namespace ramiel {

// One line per graph output whose computed element type, rank or a known size
// differs from its declared type ("output 'y' is declared float[4x3]; the run
// gave float[4x4]"). `inputs`: the run's non-constant graph inputs in order;
// where one differs from its declaration the outputs' declarations do not hold
// for the run, and nothing is returned.
std::vector<std::string> outputsContradictingDeclarations(const Graph& g, const std::vector<Tensor>& inputs,
                                                          const std::vector<Tensor>& outputs);

}  // namespace ramiel
