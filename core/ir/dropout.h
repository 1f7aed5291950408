// What a Dropout node does, as its opset, attributes and constant inputs say:
// inference (a copy) or training (random drops), and the ratio. The runtime's
// kernel reads the same inputs at run time; the passes and code generation,
// which run before, know them only where they are constants.
#pragma once

#include "core/ir/graph.h"

#include <functional>
#include <optional>

namespace ramiel {

struct DropoutMode {
    std::optional<bool> training;  // nullopt: training_mode is computed
    std::optional<double> ratio;   // nullopt: ratio is computed

    // Certainly a copy of the input: inference, or training with a ratio of 0.
    bool dropsNothing() const { return training == false || (training == true && ratio == 0.0); }
};

// `constant(i)`: input i's tensor where it is a known constant, else nullptr.
// Before opset 7 the is_test attribute decides (0, the default, is training);
// opsets 7-11 have no training mode; from opset 12 the training_mode input
// (absent: inference) and the ratio input (absent: 0.5) decide.
DropoutMode dropoutMode(const Node& n, const std::function<const Tensor*(size_t)>& constant);

}  // namespace ramiel
