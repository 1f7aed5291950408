// The parts of a Split node given no sizes, as ONNX defines them: before opset 18
// equal parts, which must divide the axis; from opset 18 (num_outputs) parts of
// ceil(size / n), the last one smaller but not empty (as ONNX Runtime reads it).
// Shared by the node checks (known sizes, at load) and the kernel (at run time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ramiel {

struct SplitParts {
    std::vector<int64_t> sizes;
    std::string problem;  // why the axis cannot be split so; then `sizes` is empty
};

// `size`: the axis's elements (at least 0); `parts`: the node's outputs (at least 1).
SplitParts splitParts(int64_t opset, int64_t size, int64_t parts);

}  // namespace ramiel
