// A float matrix-vector product split over the intra-op threads: a one-row
// Gemm with constant B (a classifier at batch 1). OpenBLAS's gemv (ATen's mv)
// ran no faster on two threads than on one.
#pragma once

#include <ATen/ATen.h>

namespace ramiel {

// y = alpha * rows x + beta * c, as a [1, N] tensor. rows: contiguous float [N, K];
// x: float, K elements ([K] or [1, K], any strides); c: undefined, one element or
// N (any float type).
// Each element is one row's dot product, summed in the same order whatever the
// thread count, so results do not depend on it.
at::Tensor matrixVectorProduct(const at::Tensor& rows, const at::Tensor& x, const at::Tensor& c, float alpha,
                               float beta);

}  // namespace ramiel
