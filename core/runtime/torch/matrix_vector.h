// A float matrix-vector product split over the intra-op threads: a one-row
// Gemm with constant B (a classifier at batch 1). OpenBLAS's gemv (ATen's mv)
// ran no faster on two threads than on one.
#pragma once

#include <ATen/ATen.h>

namespace ramiel {

// y = alpha * rows x + beta * c, as a [1, N] tensor (or of `sizes`, N elements).
// rows: contiguous float [N, K]; x: float, K elements ([K] or [1, K], any strides);
// c: undefined, one element or N (any float type).
// Each element is one row's dot product, summed in the same order whatever the
// thread count, so results do not depend on it.
at::Tensor matrixVectorProduct(const at::Tensor& rows, const at::Tensor& x, const at::Tensor& c, float alpha,
                               float beta, c10::IntArrayRef sizes = {});

// y = rows x + c with the rows given as columns: cols is contiguous float [K, N],
// rows transposed, for products with fewer columns than rows (K < N), whose short
// rows leave a dot product's vector lanes idle: each column scaled by its x and
// summed into y in order, vectorized along N, chunks of N split over the intra-op
// threads. x: K floats (any strides); c: undefined or N floats, contiguous. The
// output has `sizes` (N elements).
at::Tensor matrixVectorByColumns(const at::Tensor& cols, const at::Tensor& x, const at::Tensor& c,
                                 c10::IntArrayRef sizes);

}  // namespace ramiel
