#include "core/runtime/torch/matrix_vector.h"

#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/intra_op_threads.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/target_clones.h"

#include <algorithm>

namespace ramiel {

namespace {

constexpr int kLanes = 16;  // partial sums per row: one AVX-512 register, two AVX2 ones
constexpr int64_t kPanel = 128;  // columns summed in registers at once: 8 AVX-512 registers

// The dot product of `row` (k floats) with x: kLanes partial sums over whole
// blocks, the tail, then the partial sums in order. rowsOf4 below sums in
// exactly this order, so a row's result does not depend on its group.
RAMIEL_CLONES float dotRow(const float* __restrict row, const float* __restrict x, int64_t k)
{
    float acc[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= k; j += kLanes)
        for (int l = 0; l < kLanes; ++l)
            acc[l] += row[j + l] * x[j + l];
    float sum = 0.0f;
    for (; j < k; ++j)
        sum += row[j] * x[j];
    for (int l = 0; l < kLanes; ++l)
        sum += acc[l];
    return sum;
}

// Four rows at once (rows k floats apart): four weight streams in flight and x
// loaded once for them; the product is memory-bound (each weight read once).
RAMIEL_CLONES void rowsOf4(float* __restrict y, const float* __restrict w, const float* __restrict x, int64_t k)
{
    const float* __restrict r0 = w;
    const float* __restrict r1 = w + k;
    const float* __restrict r2 = w + 2 * k;
    const float* __restrict r3 = w + 3 * k;
    float a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
    int64_t j = 0;
    for (; j + kLanes <= k; j += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            const float v = x[j + l];
            a0[l] += r0[j + l] * v;
            a1[l] += r1[j + l] * v;
            a2[l] += r2[j + l] * v;
            a3[l] += r3[j + l] * v;
        }
    float* acc[4] = {a0, a1, a2, a3};
    const float* rows[4] = {r0, r1, r2, r3};
    for (int i = 0; i < 4; ++i) {
        float sum = 0.0f;
        for (int64_t t = j; t < k; ++t)
            sum += rows[i][t] * x[t];
        for (int l = 0; l < kLanes; ++l)
            sum += acc[i][l];
        y[i] = sum;
    }
}

// y[r] = the dot product of row r of `w` (rows of k floats) with x, for `count` rows.
void dotRows(float* y, const float* w, const float* x, int64_t count, int64_t k)
{
    int64_t r = 0;
    for (; r + 4 <= count; r += 4)
        rowsOf4(y + r, w + r * k, x, k);
    for (; r < count; ++r)
        y[r] = dotRow(w + r * k, x, k);
}

// y (count floats) += x[j] times column j of `cols` (k columns, `stride` floats
// apart, count read from each), for every j in order. Blocks of kPanel outputs stay
// in registers over all k; each output's sum is in the same order either way.
RAMIEL_CLONES void addColumns(float* __restrict y, const float* __restrict cols, const float* __restrict x, int64_t k,
                              int64_t count, int64_t stride)
{
    constexpr int64_t kBlock = kPanel;
    int64_t begin = 0;
    for (; begin + kBlock <= count; begin += kBlock) {
        float acc[kBlock];
        for (int64_t i = 0; i < kBlock; ++i)
            acc[i] = y[begin + i];
        for (int64_t j = 0; j < k; ++j) {
            const float v = x[j];
            const float* __restrict col = cols + j * stride + begin;
            for (int64_t i = 0; i < kBlock; ++i)
                acc[i] += v * col[i];
        }
        for (int64_t i = 0; i < kBlock; ++i)
            y[begin + i] = acc[i];
    }
    for (int64_t j = 0; j < k && begin < count; ++j) {
        const float v = x[j];
        const float* __restrict col = cols + j * stride;
        for (int64_t i = begin; i < count; ++i)
            y[i] += v * col[i];
    }
}

// R rows of y (ldy floats apart) += the same rows of x (ldx apart) times `count`
// columns (k of them, `stride` floats apart): each column's weights read once for
// all R rows, in blocks of 64 outputs a row held in registers (R = 4: 16 AVX-512
// registers). Each output's sum runs over j in order, as addColumns's does.
template <int R>
inline __attribute__((always_inline)) void addColumnsRowsBody(float* __restrict y, int64_t ldy,
                                                              const float* __restrict cols, const float* __restrict x,
                                                              int64_t ldx, int64_t k, int64_t count, int64_t stride)
{
    constexpr int64_t kBlock = 64;
    int64_t begin = 0;
    for (; begin + kBlock <= count; begin += kBlock) {
        float acc[R][kBlock];
        for (int r = 0; r < R; ++r)
            for (int64_t i = 0; i < kBlock; ++i)
                acc[r][i] = y[r * ldy + begin + i];
        for (int64_t j = 0; j < k; ++j) {
            const float* __restrict col = cols + j * stride + begin;
            for (int r = 0; r < R; ++r) {
                const float v = x[r * ldx + j];
                for (int64_t i = 0; i < kBlock; ++i)
                    acc[r][i] += v * col[i];
            }
        }
        for (int r = 0; r < R; ++r)
            for (int64_t i = 0; i < kBlock; ++i)
                y[r * ldy + begin + i] = acc[r][i];
    }
    for (int64_t j = 0; j < k && begin < count; ++j)
        for (int r = 0; r < R; ++r) {
            const float v = x[r * ldx + j];
            for (int64_t i = begin; i < count; ++i)
                y[r * ldy + i] += v * cols[j * stride + i];
        }
}

RAMIEL_CLONES void addColumnsRows2(float* y, int64_t ldy, const float* cols, const float* x, int64_t ldx, int64_t k,
                                   int64_t count, int64_t stride)
{
    addColumnsRowsBody<2>(y, ldy, cols, x, ldx, k, count, stride);
}

RAMIEL_CLONES void addColumnsRows3(float* y, int64_t ldy, const float* cols, const float* x, int64_t ldx, int64_t k,
                                   int64_t count, int64_t stride)
{
    addColumnsRowsBody<3>(y, ldy, cols, x, ldx, k, count, stride);
}

RAMIEL_CLONES void addColumnsRows4(float* y, int64_t ldy, const float* cols, const float* x, int64_t ldx, int64_t k,
                                   int64_t count, int64_t stride)
{
    addColumnsRowsBody<4>(y, ldy, cols, x, ldx, k, count, stride);
}

// Rows per chunk of a matrix-vector product, chunks taken by the threads as they
// come: about an eighth of a thread's share of the weights, between 16K and 256K
// weights (64 KiB and 1 MiB), in whole groups of 4 rows. Each weight is read once,
// from memory for a classifier's; two threads reading the rows in 64 KiB chunks took
// 1.1x the time of 1 MiB ones on AlexNet's 4096 x 4096 (docs/runtime.md).
int64_t rowsPerChunk(int64_t n, int64_t k)
{
    const int64_t share = n * k / (8 * int64_t(currentIntraOpThreads()));
    const int64_t weights = std::clamp<int64_t>(share, int64_t(1) << 14, int64_t(1) << 18);
    return std::max<int64_t>(4, weights / std::max<int64_t>(k, 1) / 4 * 4);
}

}  // namespace

at::Tensor packColumns(const at::Tensor& cols)
{
    const int64_t k = cols.size(0), n = cols.size(1);
    at::Tensor packed = at::empty({k * n}, cols.options().dtype(at::kFloat));
    for (int64_t begin = 0; begin < n; begin += kPanel) {
        const int64_t width = std::min(kPanel, n - begin);
        packed.narrow(0, begin * k, k * width).view({k, width}).copy_(cols.narrow(1, begin, width));
    }
    return packed;
}

void packedColumnsProduct(float* y, int64_t ldy, const float* packed, const float* x, int64_t ldx, int64_t rows,
                          int64_t k, int64_t n)
{
    const int64_t panels = (n + kPanel - 1) / kPanel;
    // About 16K weights (64 KiB) a chunk, taken by the threads as they come.
    const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(k * kPanel, 1));
    parallelChunks(panels, chunk, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            const int64_t begin = p * kPanel, width = std::min(kPanel, n - begin);
            const float* panel = packed + begin * k;
            for (int64_t r = 0; r < rows; ++r)
                std::fill(y + r * ldy + begin, y + r * ldy + begin + width, 0.0f);
            int64_t r = 0;
            for (; r + 4 <= rows; r += 4)
                addColumnsRows4(y + r * ldy + begin, ldy, panel, x + r * ldx, ldx, k, width, width);
            if (rows - r == 3)
                addColumnsRows3(y + r * ldy + begin, ldy, panel, x + r * ldx, ldx, k, width, width);
            else if (rows - r == 2)
                addColumnsRows2(y + r * ldy + begin, ldy, panel, x + r * ldx, ldx, k, width, width);
            else if (rows - r == 1)
                addColumns(y + r * ldy + begin, panel, x + r * ldx, k, width, width);
        }
    });
}

at::Tensor matrixVectorByColumns(const at::Tensor& packed, const at::Tensor& x, const at::Tensor& c,
                                 c10::IntArrayRef sizes)
{
    const int64_t n = c10::multiply_integers(sizes), k = n > 0 ? packed.numel() / n : 0;
    const at::Tensor v = x.contiguous();
    at::Tensor y = emptyFloat(sizes, at::MemoryFormat::Contiguous);
    float* out = y.data_ptr<float>();
    const float* w = packed.data_ptr<float>();
    const float* xs = v.data_ptr<float>();
    const float* cs = c.defined() ? c.data_ptr<float>() : nullptr;
    // Panels taken by the threads as they come, each a contiguous stream of weights.
    parallelChunks((n + kPanel - 1) / kPanel, 1, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            const int64_t begin = p * kPanel, width = std::min(kPanel, n - begin);
            if (cs)
                std::copy(cs + begin, cs + begin + width, out + begin);
            else
                std::fill(out + begin, out + begin + width, 0.0f);
            addColumns(out + begin, w + begin * k, xs, k, width, width);
        }
    });
    return y;
}

at::Tensor matrixVectorProduct(const at::Tensor& rows, const at::Tensor& x, const at::Tensor& c, float alpha,
                               float beta, c10::IntArrayRef sizes)
{
    const int64_t n = rows.size(0), k = rows.size(1);
    const at::Tensor v = x.contiguous();
    // A float bias as it is: each ATen call here would be the first of the run's tail, cold.
    const at::Tensor add = !c.defined() || (c.scalar_type() == at::kFloat && c.is_contiguous()) ? c
                                                                                             : c.to(at::kFloat).contiguous();
    at::Tensor y = sizes.empty() ? emptyFloat({1, n}, at::MemoryFormat::Contiguous)
                                 : emptyFloat(sizes, at::MemoryFormat::Contiguous);
    const float* w = rows.data_ptr<float>();
    const float* xs = v.data_ptr<float>();
    const float* cs = add.defined() ? add.data_ptr<float>() : nullptr;
    const bool scalarC = add.defined() && add.numel() == 1;
    float* out = y.data_ptr<float>();
    const int64_t chunk = rowsPerChunk(n, k);
    parallelChunks(n, chunk, [&](int64_t begin, int64_t end) {
        dotRows(out + begin, w + begin * k, xs, end - begin, k);
        for (int64_t r = begin; r < end; ++r) {
            out[r] *= alpha;
            if (cs)
                out[r] += beta * cs[scalarC ? 0 : r];
        }
    });
    return y;
}

}  // namespace ramiel
