// Built with -ffast-math, which is what makes glibc's <math.h> declare its
// vector variants (_ZGVeN16v_erff, ...) for `omp simd` loops to call; the
// loops here do nothing else that fast-math could change.
#include "core/runtime/torch/vector_math.h"

#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/target_clones.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RAMIEL_AVX512_EXP 1
#endif

namespace ramiel {

namespace {

constexpr float kSoftmaxLowest = -87.0f;  // exp(-87) = 1.6e-38, above FLT_MIN

// A float's bits, read in place (vectorizes where a memcpy per element does not).
typedef uint32_t __attribute__((may_alias)) FloatBits;
constexpr uint32_t kInfinityBits = 0x7f800000u;

// Whether v is infinite or NaN, from its bits (-ffast-math folds isnan and isinf away).
inline bool infiniteOrNaN(float v) { return (*reinterpret_cast<const FloatBits*>(&v) & kInfinityBits) == kInfinityBits; }

RAMIEL_CLONES void erfRun(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = erff(x[i]);
}

RAMIEL_CLONES void siluMvec(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = x[i] / (1.0f + expf(-x[i]));
}

RAMIEL_CLONES void sigmoidMvec(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = 1.0f / (1.0f + expf(-x[i]));
}

RAMIEL_CLONES void tanhMvec(float* __restrict y, const float* __restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
        y[i] = tanhf(x[i]);
}

#ifdef RAMIEL_AVX512_EXP
// GCC 12's AVX-512 intrinsics start their results from `__m512 __Y = __Y;`
// (_mm512_undefined_ps), which -Wmaybe-uninitialized reports wherever one is inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// exp(x) of 16 floats: x = k ln2 + r (|r| <= ln2 / 2, ln2 split in two for the
// reduction), e^r as Cephes' degree-7 polynomial, scaled by 2^k; x clamped to
// [-88, 88], where e^x stays a normal float.
__attribute__((target("avx512f"))) inline __m512 exp16(__m512 x)
{
    x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.0f)), _mm512_set1_ps(-88.0f));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, k);
}

// 1 / (1 + e^-x) of 16 floats, the reciprocal as rcp14 and one Newton step; 0 below x = -88,
// as in ATen, where e^-x overflows float (rcp14 of e^88 is a denormal, which stays one
// unless the thread flushes denormals to zero: SiLU would make -inf of -inf, not NaN).
__attribute__((target("avx512f"))) inline __m512 sigmoid16(__m512 v)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 d = _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), v)));
    const __m512 r = _mm512_rcp14_ps(d);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_set1_ps(-88.0f), _CMP_NLT_UQ),
                               _mm512_fmadd_ps(r, _mm512_fnmadd_ps(d, r, one), r));
}

// x / (1 + e^-x) (within 2.5e-7 relative of the exact SiLU): 1.2-1.5x the speed
// of libmvec's expf and a division, and of oneDNN 2.6's swish.
__attribute__((target("avx512f"))) void siluAvx512(float* __restrict y, const float* __restrict x, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, _mm512_mul_ps(v, sigmoid16(v)));
    }
    siluMvec(y + i, x + i, n - i);
}

// NaN stays NaN (exp16's clamp would make it a number).
__attribute__((target("avx512f"))) void sigmoidAvx512(float* __restrict y, const float* __restrict x, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, _mm512_mask_mov_ps(sigmoid16(v), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v));
    }
    sigmoidMvec(y + i, x + i, n - i);
}

// Softmax of `rows` rows of n floats, as softmaxRows below computes it (the
// same clamp, flush and NaN rows), exp as exp16 and the last n % 16 floats of
// a row as one masked vector, NaN found by comparison in the pass that finds
// the maximum (fast-math does not fold intrinsics' comparisons away). With
// libmvec's expf, its scalar tail and a pass for NaN, rows of 49 (Swin's
// windows) took 1.33x this time.
__attribute__((target("avx512f"))) void softmaxRowsAvx512(float* __restrict y, const float* __restrict x, int64_t rows,
                                                          int64_t n)
{
    const __m512 lowest = _mm512_set1_ps(kSoftmaxLowest), none = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    const int64_t full = n / 16 * 16;
    const __mmask16 tail = __mmask16((1u << (n - full)) - 1);
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * n;
        float* out = y + r * n;
        __m512 top = none;
        __mmask16 nan = 0;
        for (int64_t i = 0; i < n; i += 16) {
            const __m512 v = _mm512_mask_loadu_ps(none, i < full ? __mmask16(0xffff) : tail, in + i);
            top = _mm512_max_ps(top, v);
            nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        }
        const float largest = _mm512_reduce_max_ps(top);
        if (nan || infiniteOrNaN(largest)) {
            std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        const __m512 shift = _mm512_set1_ps(largest);
        __m512 sum = _mm512_setzero_ps();
        for (int64_t i = 0; i < n; i += 16) {
            const __mmask16 lanes = i < full ? __mmask16(0xffff) : tail;
            const __m512 d = _mm512_sub_ps(_mm512_mask_loadu_ps(none, lanes, in + i), shift);
            const __m512 e = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(d, lowest, _CMP_GE_OQ), exp16(d));
            _mm512_mask_storeu_ps(out + i, lanes, e);
            sum = _mm512_add_ps(sum, e);
        }
        const float total = _mm512_reduce_add_ps(sum);
        const __m512 scale = _mm512_set1_ps(1.0f / total), smallest = _mm512_set1_ps(std::numeric_limits<float>::min() * total);
        for (int64_t i = 0; i < n; i += 16) {
            const __mmask16 lanes = i < full ? __mmask16(0xffff) : tail;
            const __m512 e = _mm512_maskz_loadu_ps(lanes, out + i);
            _mm512_mask_storeu_ps(out + i, lanes, _mm512_maskz_mul_ps(_mm512_cmp_ps_mask(e, smallest, _CMP_GE_OQ), e, scale));
        }
    }
}

#pragma GCC diagnostic pop
#endif

using Loop = void (*)(float*, const float*, int64_t);

bool hasAvx512()
{
#ifdef RAMIEL_AVX512_EXP
    static const bool has = __builtin_cpu_supports("avx512f");
    return has;
#else
    return false;
#endif
}

// `avx512` (null where it was not built) on a processor that has AVX-512, else `portable`.
void byProcessor(Loop avx512, Loop portable, float* y, const float* x, int64_t n)
{
    (avx512 && hasAvx512() ? avx512 : portable)(y, x, n);
}

#ifdef RAMIEL_AVX512_EXP
constexpr Loop kSiluAvx512 = siluAvx512, kSigmoidAvx512 = sigmoidAvx512;
#else
constexpr Loop kSiluAvx512 = nullptr, kSigmoidAvx512 = nullptr;
#endif

}  // namespace

void siluRun(float* y, const float* x, int64_t n) { byProcessor(kSiluAvx512, siluMvec, y, x, n); }
void sigmoidRun(float* y, const float* x, int64_t n) { byProcessor(kSigmoidAvx512, sigmoidMvec, y, x, n); }
void tanhRun(float* y, const float* x, int64_t n) { tanhMvec(y, x, n); }

namespace {

// `run` over every element of x, in x's own layout when it is dense (contiguous
// or channels-last), into a tensor of the same layout.
template <typename Run>
at::Tensor elementwise(const at::Tensor& x, Run run)
{
    const at::Tensor src = x.is_non_overlapping_and_dense() ? x : x.contiguous();
    at::Tensor y = emptyFloatLike(src);
    const float* in = src.data_ptr<float>();
    float* out = y.data_ptr<float>();
    parallelChunks(src.numel(), int64_t(1) << 15, [&](int64_t begin, int64_t end) { run(out + begin, in + begin, end - begin); });
    return y;
}

// Softmax of each of `rows` rows of n floats: the maximum, exp of the
// differences (libmvec's expf) and their sum, then a product by its reciprocal.
// A probability below the smallest normal float is 0, as oneDNN's kernel makes
// it: a denormal costs the FPU a microcode assist wherever it goes
// (Swin's masked windows, exp(-100), made the MatMul after them 15x slower).
// A row with a NaN, or whose maximum is infinite, is NaN throughout, as ATen
// computes it (read from the bits: -ffast-math folds isnan away).
RAMIEL_CLONES void softmaxRows(float* __restrict y, const float* __restrict x, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * n;
        float* out = y + r * n;
        float top = in[0];
        for (int64_t i = 1; i < n; ++i)
            top = in[i] > top ? in[i] : top;
        const FloatBits* bits = reinterpret_cast<const FloatBits*>(in);
        uint32_t magnitude = 0;  // the largest |x|'s bits: above infinity's where one is NaN
#pragma omp simd reduction(max : magnitude)
        for (int64_t i = 0; i < n; ++i) {
            const uint32_t m = bits[i] & 0x7fffffffu;
            magnitude = magnitude > m ? magnitude : m;
        }
        if (magnitude > kInfinityBits || infiniteOrNaN(top)) {
            std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i) {
            const float d = in[i] - top;
            const float e = expf(d < kSoftmaxLowest ? kSoftmaxLowest : d);
            out[i] = d < kSoftmaxLowest ? 0.0f : e;
            sum += out[i];
        }
        const float scale = 1.0f / sum, smallest = std::numeric_limits<float>::min() * sum;
#pragma omp simd
        for (int64_t i = 0; i < n; ++i)
            out[i] = out[i] < smallest ? 0.0f : out[i] * scale;
    }
}

// Layer normalization of `rows` rows of n floats: the mean, then the mean of the
// squared deviations (two passes over a row still in cache: as exact as ATen's
// Welford), then (x - mean) / sqrt(var + eps) · w (+ b).
RAMIEL_CLONES void layerNormRows(float* __restrict y, const float* __restrict x, const float* __restrict w,
                                 const float* __restrict b, int64_t rows, int64_t n, float eps)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x + r * n;
        float* out = y + r * n;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (int64_t i = 0; i < n; ++i)
            sum += in[i];
        const float mean = sum / float(n);
        float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
        for (int64_t i = 0; i < n; ++i)
            squares += (in[i] - mean) * (in[i] - mean);
        const float scale = 1.0f / std::sqrt(squares / float(n) + eps);
        if (b) {
#pragma omp simd
            for (int64_t i = 0; i < n; ++i)
                out[i] = (in[i] - mean) * scale * w[i] + b[i];
        } else {
#pragma omp simd
            for (int64_t i = 0; i < n; ++i)
                out[i] = (in[i] - mean) * scale * w[i];
        }
    }
}

}  // namespace

at::Tensor layerNormLastFloat(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, float eps)
{
    const at::Tensor src = x.contiguous(), w = weight.contiguous(), b = bias.defined() ? bias.contiguous() : bias;
    at::Tensor y = emptyFloat(src.sizes(), at::MemoryFormat::Contiguous);
    const int64_t n = w.numel(), rows = n > 0 ? src.numel() / n : 0;
    const float* in = src.data_ptr<float>();
    const float* ws = w.data_ptr<float>();
    const float* bs = b.defined() ? b.data_ptr<float>() : nullptr;
    float* out = y.data_ptr<float>();
    at::parallel_for(0, rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1)),
                     [&](int64_t begin, int64_t end) { layerNormRows(out + begin * n, in + begin * n, ws, bs, end - begin, n, eps); });
    return y;
}

at::Tensor softmaxLastFloat(const at::Tensor& x)
{
    const at::Tensor src = x.contiguous();
    at::Tensor y = emptyFloat(src.sizes(), at::MemoryFormat::Contiguous);
    const int64_t n = src.size(-1), rows = n > 0 ? src.numel() / n : 0;
    const float* in = src.data_ptr<float>();
    float* out = y.data_ptr<float>();
#ifdef RAMIEL_AVX512_EXP
    const auto kernel = hasAvx512() ? softmaxRowsAvx512 : softmaxRows;
#else
    const auto kernel = softmaxRows;
#endif
    parallelChunks(rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1)),
                   [&](int64_t begin, int64_t end) { kernel(out + begin * n, in + begin * n, end - begin, n); });
    return y;
}

at::Tensor erfFloat(const at::Tensor& x) { return elementwise(x, erfRun); }
at::Tensor siluFloat(const at::Tensor& x) { return elementwise(x, siluRun); }

void siluFloatInPlace(at::Tensor& x)
{
    float* data = x.data_ptr<float>();
    // A fixed contiguous share per thread: after a convolution each thread finds
    // most of its share in its own cache (chunks handed out as threads came took
    // 2-3 % longer on two threads).
    at::parallel_for(0, x.numel(), int64_t(1) << 14,
                     [&](int64_t begin, int64_t end) { siluRun(data + begin, data + begin, end - begin); });
}

}  // namespace ramiel
