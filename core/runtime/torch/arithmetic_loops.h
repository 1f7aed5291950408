// Add, Sub, Mul and Div of float tensors without ATen's dispatcher and
// TensorIterator, whose setup is cold inside a model (the node before has
// streamed its data through the caches): ViT's residual Add of two [1, 50, 768]
// took 14-30 us through at::add on one thread, its query scaling (Div by one
// value) 12 us. The same IEEE operation per element as ATen's, so the results are
// bitwise equal; NaN and infinities pass as there.
#pragma once

#include <ATen/ATen.h>

namespace ramiel {

enum class Arithmetic { Add, Sub, Mul, Div };

// a op b for float tensors where they have the same sizes and strides (dense), or
// one has a single element, or one is contiguous and repeats over the other's
// trailing dimensions (a bias row, a mask per window) with the other contiguous.
// Written into a (or b) where that operand is handed over (no other holder) and
// has the result's sizes; split over the intra-op threads above 32768 elements.
// Undefined where none of these applies (ATen's then).
at::Tensor arithmeticFloat(Arithmetic op, const at::Tensor& a, const at::Tensor& b);

}  // namespace ramiel
