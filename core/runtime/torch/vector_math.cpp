// Built with -ffast-math, which is what makes glibc's <math.h> declare its
// vector variants (_ZGVeN16v_erff, ...) for `omp simd` loops to call; the
// loops here do nothing else that fast-math could change.
#include "core/runtime/torch/vector_math.h"

#include "core/runtime/torch/parallel_chunks.h"

#include <cmath>

namespace ramiel {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define RAMIEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RAMIEL_CLONES
#endif

RAMIEL_CLONES void erfRun(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = erff(x[i]);
}

}  // namespace

at::Tensor erfFloat(const at::Tensor& x)
{
    const at::Tensor src = x.contiguous();
    at::Tensor y = at::empty_like(src);
    const float* in = src.data_ptr<float>();
    float* out = y.data_ptr<float>();
    parallelChunks(src.numel(), int64_t(1) << 15, [&](int64_t begin, int64_t end) { erfRun(out + begin, in + begin, end - begin); });
    return y;
}

}  // namespace ramiel
