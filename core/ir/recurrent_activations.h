// The activation functions of an LSTM, GRU or RNN node, as its activations,
// activation_alpha and activation_beta attributes give them. The runtime's
// kernels and code generation read them here.
#pragma once

#include "core/ir/graph.h"

#include <optional>
#include <string>
#include <vector>

namespace ramiel {

struct RecurrentActivation {
    std::string name;  // lower case: "sigmoid", "tanh", "relu", "affine", "leakyrelu", "thresholdedrelu",
                       // "scaledtanh", "hardsigmoid", "elu", "softsign", "softplus"
    float alpha = 0, beta = 0;  // where the function takes them: given, else ONNX's default for it
    bool operator==(const RecurrentActivation& o) const { return name == o.name && alpha == o.alpha && beta == o.beta; }
};

// The node's functions, direction by direction (LSTM f, g, h; GRU f, g; RNN f): the attribute's
// names (any case), each function that takes an alpha or a beta taking the next of
// activation_alpha's or activation_beta's values, else the defaults (Sigmoid, Tanh, Tanh;
// Sigmoid, Tanh; Tanh). Where a bidirectional node names one direction's functions, they
// serve both, with the same alphas and betas.
// nullopt with `why` set where the attribute names the wrong number of functions or one that is
// not ONNX's.
std::optional<std::vector<RecurrentActivation>> recurrentActivations(const Node& n, size_t directions, std::string& why);

// The defaults for the node's operator, direction by direction.
std::vector<RecurrentActivation> defaultRecurrentActivations(const std::string& opType, size_t directions);

}  // namespace ramiel
