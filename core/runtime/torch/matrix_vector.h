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

// y = rows x + c with the rows given as columns, packed: `packed` is
// packColumns(cols) of cols, contiguous float [K, N], rows transposed, for
// products with fewer columns than rows (K < N), whose short rows leave a dot
// product's vector lanes idle: each column scaled by its x and summed into y in
// order, vectorized along N, panels of N split over the intra-op threads.
// x: K floats (any strides); c: undefined or N floats, contiguous. The output
// has `sizes` (N elements).
at::Tensor matrixVectorByColumns(const at::Tensor& packed, const at::Tensor& x, const at::Tensor& c,
                                 c10::IntArrayRef sizes);

// Columns [k, n] (float) laid out for packedColumnsProduct and matrixVectorByColumns: panels of 128 columns,
// each contiguous ([k, 128], the last narrower), so that a product streams through
// memory; 64 x 256 from the second-level cache 0.43 us against 0.65 as rows of n.
at::Tensor packColumns(const at::Tensor& cols);

// y = x times the packed columns for `rows` rows (y's n floats a row, ldy apart;
// x's k, ldx apart), each weight read once for up to four rows, panels split over
// the intra-op threads: a recurrent cell's states times its weights, every step.
// A row's result does not depend on the others or on the thread count.
void packedColumnsProduct(float* y, int64_t ldy, const float* packed, const float* x, int64_t ldx, int64_t rows,
                          int64_t k, int64_t n);

}  // namespace ramiel
