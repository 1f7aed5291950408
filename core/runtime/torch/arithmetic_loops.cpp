#include "core/runtime/torch/arithmetic_loops.h"

#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/target_clones.h"

#include <algorithm>

namespace ramiel {

namespace {

// One run of n results. aStep and bStep are 1 for a vector and 0 for a single value;
// y may be a or b itself (each element is read before it is written).
RAMIEL_CLONES void arithmeticRun(Arithmetic op, float* y, const float* a, int64_t aStep, const float* b, int64_t bStep,
                                 int64_t n)
{
    // The four cases of each operation spelled out so that each loop vectorizes.
#define RAMIEL_ARITHMETIC_LOOPS(expr)                                         \
    if (aStep && bStep) {                                                     \
        _Pragma("GCC ivdep") for (int64_t i = 0; i < n; ++i)                  \
        {                                                                     \
            const float x = a[i], z = b[i];                                   \
            y[i] = expr;                                                      \
        }                                                                     \
    } else if (aStep) {                                                       \
        const float z = *b;                                                   \
        _Pragma("GCC ivdep") for (int64_t i = 0; i < n; ++i)                  \
        {                                                                     \
            const float x = a[i];                                             \
            y[i] = expr;                                                      \
        }                                                                     \
    } else {                                                                  \
        const float x = *a;                                                   \
        _Pragma("GCC ivdep") for (int64_t i = 0; i < n; ++i)                  \
        {                                                                     \
            const float z = b[i];                                             \
            y[i] = expr;                                                      \
        }                                                                     \
    }
    switch (op) {
    case Arithmetic::Add: RAMIEL_ARITHMETIC_LOOPS(x + z) break;
    case Arithmetic::Sub: RAMIEL_ARITHMETIC_LOOPS(x - z) break;
    case Arithmetic::Mul: RAMIEL_ARITHMETIC_LOOPS(x * z) break;
    case Arithmetic::Div: RAMIEL_ARITHMETIC_LOOPS(x / z) break;
    }
#undef RAMIEL_ARITHMETIC_LOOPS
}

// True where `small` (contiguous) repeats over `big`'s trailing dimensions: its sizes,
// leading ones aside, are big's last ones.
bool repeatsOver(const at::Tensor& small, const at::Tensor& big)
{
    if (small.dim() > big.dim() || !small.is_contiguous() || !big.is_contiguous())
        return false;
    int64_t d = small.dim();
    while (d > 0 && small.size(small.dim() - d) == 1)
        --d;  // leading ones
    for (int64_t k = 1; k <= d; ++k)
        if (small.size(-k) != big.size(-k))
            return false;
    return true;
}

}  // namespace

at::Tensor arithmeticFloat(Arithmetic op, const at::Tensor& a, const at::Tensor& b)
{
    if (!a.defined() || !b.defined() || a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat ||
        a.device() != at::kCPU || b.device() != at::kCPU || a.numel() == 0 || b.numel() == 0)
        return {};
    // The operand that gives the result its sizes and layout (`big`), and how the other repeats.
    const bool aBig = a.dim() >= b.dim() && a.numel() >= b.numel();
    const at::Tensor& big = aBig ? a : b;
    const at::Tensor& small = aBig ? b : a;
    if (small.dim() > big.dim() || !big.is_non_overlapping_and_dense())
        return {};
    const bool same = small.sizes() == big.sizes() && small.strides() == big.strides();
    const bool single = small.numel() == 1;
    if (!same && !single && !repeatsOver(small, big))
        return {};
    at::Tensor y;
    if (heldOnlyHere(big))
        y = big;
    else if (same && heldOnlyHere(small))
        y = small;
    else
        y = emptyFloatLike(big);
    const int64_t n = big.numel(), period = same || single ? n : small.numel();
    const float* bp = big.data_ptr<float>();
    const float* sp = small.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const int64_t smallStep = single ? 0 : 1;
    auto span = [&](int64_t begin, int64_t end) {  // results [begin, end), within one period where small repeats
        const float* s = sp + (smallStep ? begin % period : 0);
        if (aBig)
            arithmeticRun(op, yp + begin, bp + begin, 1, s, smallStep, end - begin);
        else
            arithmeticRun(op, yp + begin, s, smallStep, bp + begin, 1, end - begin);
    };
    // Chunks of whole periods, or of 16384 results where small does not repeat.
    constexpr int64_t kGrain = 32768, kChunk = 16384;
    const int64_t chunk = period < n ? std::max<int64_t>(1, kChunk / period) * period : kChunk;
    auto body = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i = std::min(end, (i / period + 1) * period))
            span(i, std::min(end, (i / period + 1) * period));
    };
    if (n >= kGrain)
        parallelChunks(n, chunk, body);
    else
        body(0, n);
    return y;
}

}  // namespace ramiel
