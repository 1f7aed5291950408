// What a constant tensor (a weight, a bias, a Constant's value) holds, in
// numbers: element count, min, max, mean, standard deviation, how many NaNs,
// infinities and zeros, and a histogram. Studio's Properties panel shows it
// for the initializers feeding a node.
#pragma once

#include "core/ir/tensor.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ramiel {

struct TensorStats {
    int64_t count = 0;       // elements
    int64_t finite = 0;      // of which finite (min, max, mean, std and the histogram are over these)
    int64_t nans = 0;
    int64_t infinities = 0;
    int64_t zeros = 0;
    double min = 0;
    double max = 0;
    double mean = 0;
    double stddev = 0;       // population standard deviation
    // Equal-width bins over [min, max] (one bin when min == max); empty when
    // no element is finite.
    std::vector<int64_t> histogram;
};

// The statistics of `tensor`'s elements. nullopt when there is nothing to
// count: the data is not loaded (external data not read) or its size does not
// match its shape, or the element type is not a number (string, complex).
// Float16 and bfloat16 are widened exactly. `bins` >= 1.
std::optional<TensorStats> tensorStats(const Tensor& tensor, int bins = 32);

}  // namespace ramiel
