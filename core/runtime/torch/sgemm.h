// oneDNN's row-major single-precision GEMM (its AVX-512 kernels, where ATen's GEMMs went to
// OpenBLAS's slower Haswell ones here), with its status turned into an exception. Only where
// the runtime is built against oneDNN's headers (RAMIEL_HAVE_DNNL).
#pragma once

#if RAMIEL_HAVE_DNNL
#include <dnnl.h>

#include <cstdint>
#include <stdexcept>

namespace ramiel {

// c[m, n] = a[m, k] · b + beta · c, row-major with leading dimensions lda, ldb, ldc; b is
// [k, n] (transB 'N') or the transpose of a [n, k] matrix ('T').
inline void sgemm(char transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float beta, float* c, int64_t ldc)
{
    if (dnnl_sgemm('N', transB, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) != dnnl_success)
        throw std::runtime_error("oneDNN sgemm failed");
}

}  // namespace ramiel
#endif
