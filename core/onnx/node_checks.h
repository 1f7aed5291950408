// Every node checked before anything runs or rewrites it: against its
// operator's ONNX schema (input and output counts, empty required inputs,
// attribute names and types, required attributes) and against what the
// runtime and the code generators assume (positive strides, dilations and
// kernel sizes; a group that divides the channels; consistent weight ranks;
// a Range step that is not zero; ...). Ramiel's own domain (ai.ramiel,
// core/ir/fused_ops.h) has no ONNX schema and is checked by its own rules.
//
// Import does not call this: `ramiel info` shows a model with broken nodes.
// Everything that executes nodes or rewrites them does: the runtime's compile
// step, passes::runPipeline (before the first pass, since constant folding
// runs kernels) and code generation.
#pragma once

#include "core/ir/model.h"

#include <string>

namespace ramiel {

// Throws Error(InvalidGraph, model.path, "node 'NAME' (OP): RULE") for the
// first node (in id order, subgraphs after their node) that breaks a rule.
void validateNodes(const Model& model);

// The rule `node` of `graph` breaks, as "node 'NAME' (OP): RULE"; empty when
// it breaks none. Subgraphs of the node are not looked at.
std::string nodeProblem(const Model& model, const Graph& graph, const Node& node);

}  // namespace ramiel
