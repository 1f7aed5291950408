// The activations a fused node (FusedConv, FusedBatchNorm) takes from the node
// after it: Relu, LeakyRelu, Sigmoid, HardSwish, Clip, and Ramiel's Silu and
// HardSwish (fuse-silu's, fuse-hardswish's).
#pragma once

#include "core/ir/graph.h"

#include <optional>
#include <string>
#include <vector>

namespace ramiel::passes {

struct FusedActivation {
    std::string name;           // the fused node's `activation`
    std::vector<float> params;  // its `activation_params`: LeakyRelu [alpha], Clip [min, max]
};

// The activation node `n` computes, when it is one a fused node takes (Clip's
// bounds constants).
std::optional<FusedActivation> activationOf(const Graph& g, const Node& n);

// Writes `a` as the fused node's attributes activation (and activation_params).
void addActivationAttributes(Node& fused, const FusedActivation& a);

}  // namespace ramiel::passes
