// Built with -ffast-math, which is what makes glibc's <math.h> declare its
// vector variants (_ZGVeN16v_erff, ...) for `omp simd` loops to call; the
// loops here do nothing else that fast-math could change.
#include "core/runtime/torch/vector_math.h"

#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/target_clones.h"

#include <algorithm>
#include <cmath>

namespace ramiel {

namespace {

RAMIEL_CLONES void erfRun(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = erff(x[i]);
}

RAMIEL_CLONES void siluRun(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] / (1.0f + expf(-x[i]));
}

// `run` over every element of x, in x's own layout when it is dense (contiguous
// or channels-last), into a tensor of the same layout.
template <typename Run>
at::Tensor elementwise(const at::Tensor& x, Run run)
{
    const at::Tensor src = x.is_non_overlapping_and_dense() ? x : x.contiguous();
    at::Tensor y = at::empty_like(src);
    const float* in = src.data_ptr<float>();
    float* out = y.data_ptr<float>();
    parallelChunks(src.numel(), int64_t(1) << 15, [&](int64_t begin, int64_t end) { run(out + begin, in + begin, end - begin); });
    return y;
}

// Softmax of each of `rows` rows of n floats: the maximum, exp of the
// differences (libmvec's expf) and their sum, then a product by its reciprocal.
RAMIEL_CLONES void softmaxRows(float* __restrict y, const float* __restrict x, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * n;
        float* out = y + r * n;
        float top = in[0];
        for (int64_t i = 1; i < n; ++i)
            top = in[i] > top ? in[i] : top;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i)
            out[i] = expf(in[i] - top);
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i)
            sum += out[i];
        const float scale = 1.0f / sum;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i)
            out[i] *= scale;
    }
}

}  // namespace

at::Tensor softmaxLastFloat(const at::Tensor& x)
{
    const at::Tensor src = x.contiguous();
    at::Tensor y = at::empty_like(src);
    const int64_t n = src.size(-1), rows = n > 0 ? src.numel() / n : 0;
    const float* in = src.data_ptr<float>();
    float* out = y.data_ptr<float>();
    parallelChunks(rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1)),
                   [&](int64_t begin, int64_t end) { softmaxRows(out + begin * n, in + begin * n, end - begin, n); });
    return y;
}

at::Tensor erfFloat(const at::Tensor& x) { return elementwise(x, erfRun); }
at::Tensor siluFloat(const at::Tensor& x) { return elementwise(x, siluRun); }

}  // namespace ramiel
