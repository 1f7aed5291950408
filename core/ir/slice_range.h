// ONNX Slice's clamping of one axis: negative starts and ends count from the end,
// then both are clamped into the axis (for a negative step, start into [0, dim - 1]
// and end into [-1, dim - 1]). A step longer than the axis takes its first element at
// most, so it becomes one of the axis's length, whose arithmetic cannot overflow; it
// must not be 0. Shared by the runtime's kernel and code generation.
#pragma once

#include <cstdint>

namespace ramiel {

void clampSlice(int64_t dim, int64_t& step, int64_t& start, int64_t& end);

}  // namespace ramiel
