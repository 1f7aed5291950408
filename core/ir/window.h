// The sliding window of a convolution or pooling node as ONNX defines it:
// kernel, strides, dilations and per-side pads, with auto_pad resolved. Shared
// by the runtime's kernels and the code generators so both read the
// attributes the same way.
#pragma once

#include "core/ir/graph.h"

#include <cstdint>
#include <vector>

namespace ramiel {

struct Window {
    std::vector<int64_t> kernel, strides, dilations, padBegin, padEnd;
    bool ceil = false;
    bool symmetric() const { return padBegin == padEnd; }
    // constant_pad_nd's pad list: last dimension first.
    std::vector<int64_t> atenPads() const;
};

// `spatial` are the input's spatial sizes, used only by auto_pad SAME_UPPER /
// SAME_LOWER (where they must be known). Strides and dilations default to 1;
// a list of the wrong length is kept as given for the caller to refuse.
Window windowOf(const Node& n, const std::vector<int64_t>& kernel, const std::vector<int64_t>& spatial);

}  // namespace ramiel
