// Hand-written kernels for float activations in the channels-last layout the
// convolutions leave: max and average pooling, global average pooling, inference batch
// normalization (a per-channel scale and shift) and Concat along channels. Each pixel's channels are contiguous there, so every kernel is a
// loop over pixels with a vector loop over channels. libtorch 1.13's own
// versions are slower on these (max_pool2d computes an index per output,
// cat copies each input through a strided TensorIterator, mean reduces over
// non-inner dimensions): docs/runtime.md has the measurements. Work is split
// over output pixels only, so results do not depend on the thread count.
#include "core/runtime/torch/channels_last.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace ramiel {

namespace {

// Vector loops: built for AVX2 and for the baseline, chosen at load time.
#if defined(__x86_64__) && defined(__GNUC__)
#define RAMIEL_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define RAMIEL_CLONES
#endif

// One output row of max pooling (`src`: the batch entry's image; `top`: the
// row's first input row, negative in the padding), each output pixel the max
// over its window's channel vectors. The whole row is one call: a call per
// window element (through the clones' dispatch) cost more than the maxima on
// 64 channels (googlenet's first MaxPool, one thread: 0.28 ms).
RAMIEL_CLONES void maxPoolRow(float* __restrict dst, const float* __restrict src, int64_t c, int64_t h, int64_t wd,
                              int64_t ow, int64_t kh, int64_t kw, int64_t sw, int64_t pw, int64_t dh, int64_t dw,
                              int64_t top)
{
    for (int64_t col = 0; col < ow; ++col) {
        float* o = dst + col * c;
        for (int64_t k = 0; k < c; ++k)
            o[k] = -std::numeric_limits<float>::infinity();
        for (int64_t i = 0; i < kh; ++i) {
            const int64_t y0 = top + i * dh;
            if (y0 < 0 || y0 >= h)
                continue;
            for (int64_t j = 0; j < kw; ++j) {
                const int64_t x0 = col * sw - pw + j * dw;
                if (x0 < 0 || x0 >= wd)
                    continue;
                const float* in = src + (y0 * wd + x0) * c;
                for (int64_t k = 0; k < c; ++k)
                    o[k] = (in[k] > o[k] || in[k] != in[k]) ? in[k] : o[k];
            }
        }
    }
}

// One output row of average pooling, as maxPoolRow: each output pixel the sum
// of its window's channel vectors inside the input, divided by `fixedCount`
// (count_include_pad) or else by the number of cells inside.
RAMIEL_CLONES void avgPoolRow(float* __restrict dst, const float* __restrict src, int64_t c, int64_t h, int64_t wd,
                              int64_t ow, int64_t kh, int64_t kw, int64_t sw, int64_t pw, int64_t top,
                              int64_t fixedCount)
{
    for (int64_t col = 0; col < ow; ++col) {
        float* o = dst + col * c;
        for (int64_t k = 0; k < c; ++k)
            o[k] = 0.0f;
        int64_t cells = 0;
        for (int64_t i = 0; i < kh; ++i) {
            const int64_t y0 = top + i;
            if (y0 < 0 || y0 >= h)
                continue;
            for (int64_t j = 0; j < kw; ++j) {
                const int64_t x0 = col * sw - pw + j;
                if (x0 < 0 || x0 >= wd)
                    continue;
                const float* in = src + (y0 * wd + x0) * c;
                for (int64_t k = 0; k < c; ++k)
                    o[k] += in[k];
                ++cells;
            }
        }
        const float divisor = float(fixedCount > 0 ? fixedCount : std::max<int64_t>(cells, 1));
        for (int64_t k = 0; k < c; ++k)
            o[k] /= divisor;
    }
}

RAMIEL_CLONES void scaleShift(float* __restrict o, const float* __restrict i, const float* __restrict scale,
                              const float* __restrict shift, int64_t n)
{
    for (int64_t c = 0; c < n; ++c)
        o[c] = i[c] * scale[c] + shift[c];
}

RAMIEL_CLONES void addInto(float* __restrict o, const float* __restrict i, int64_t n)
{
    for (int64_t c = 0; c < n; ++c)
        o[c] += i[c];
}

// Elements touched per parallel chunk below which a loop stays on one thread:
// a parallel region costs more than a few microseconds of copying.
constexpr int64_t kGrainElements = 1 << 16;

int64_t grainFor(int64_t elementsPerItem) { return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, elementsPerItem)); }

// ATen's pooling output size (symmetric pads, ceil rule: the last window starts inside input or left pad).
int64_t pooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil)
{
    const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil ? stride - 1 : 0);
    int64_t out = span / stride + 1;
    if (ceil && (out - 1) * stride >= in + pad)
        --out;
    return out;
}

}  // namespace

bool isChannelsLastFloat(const at::Tensor& x)
{
    return x.dim() == 4 && x.scalar_type() == at::kFloat && x.size(1) > 1 &&
           x.is_contiguous(at::MemoryFormat::ChannelsLast) && !x.is_contiguous();
}

bool maxPoolChannelsLastApplies(const at::Tensor& x, const Window& w)
{
    if (!isChannelsLastFloat(x) || w.kernel.size() != 2 || !w.symmetric())
        return false;
    for (size_t i = 0; i < 2; ++i)
        if (w.padBegin[i] * 2 > w.kernel[i] || w.strides[i] < 1 || w.dilations[i] < 1)
            return false;
    return true;
}

// A pooled output of oh x ow, channels-last, made row by row in parallel:
// `row(out, image, top)` fills one output row from its image, whose window
// starts at input row `top` (negative inside the padding).
template <typename Row>
at::Tensor pooledRows(const at::Tensor& x, const Window& w, int64_t oh, int64_t ow, Row&& row)
{
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
    at::Tensor y = at::empty({n, c, oh, ow}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    at::parallel_for(0, n * oh, grainFor(ow * c * w.kernel[0] * w.kernel[1]), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
            row(dst + r * ow * c, src + (r / oh) * h * wd * c, (r % oh) * w.strides[0] - w.padBegin[0]);
    });
    return y;
}

at::Tensor maxPoolChannelsLast(const at::Tensor& x, const Window& w)
{
    const int64_t c = x.size(1), h = x.size(2), wd = x.size(3);
    const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
    const int64_t ph = w.padBegin[0], pw = w.padBegin[1], dh = w.dilations[0], dw = w.dilations[1];
    const int64_t oh = pooledSize(h, kh, ph, sh, dh, w.ceil), ow = pooledSize(wd, kw, pw, sw, dw, w.ceil);
    return pooledRows(x, w, oh, ow, [&](float* out, const float* image, int64_t top) {
        maxPoolRow(out, image, c, h, wd, ow, kh, kw, sw, pw, dh, dw, top);
    });
}

bool avgPoolChannelsLastApplies(const at::Tensor& x, const Window& w)
{
    if (!maxPoolChannelsLastApplies(x, w) || w.ceil)
        return false;
    return w.dilations[0] == 1 && w.dilations[1] == 1;
}

at::Tensor avgPoolChannelsLast(const at::Tensor& x, const Window& w, bool countIncludePad)
{
    const int64_t c = x.size(1), h = x.size(2), wd = x.size(3);
    const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
    const int64_t ph = w.padBegin[0], pw = w.padBegin[1];
    const int64_t oh = pooledSize(h, kh, ph, sh, 1, false), ow = pooledSize(wd, kw, pw, sw, 1, false);
    return pooledRows(x, w, oh, ow, [&](float* out, const float* image, int64_t top) {
        avgPoolRow(out, image, c, h, wd, ow, kh, kw, sw, pw, top, countIncludePad ? kh * kw : 0);
    });
}

at::Tensor globalAveragePoolChannelsLast(const at::Tensor& x)
{
    const int64_t n = x.size(0), c = x.size(1), pixels = x.size(2) * x.size(3);
    at::Tensor y = at::zeros({n, c, 1, 1}, x.options());
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    for (int64_t b = 0; b < n; ++b) {
        float* o = dst + b * c;
        for (int64_t p = 0; p < pixels; ++p)
            addInto(o, src + (b * pixels + p) * c, c);
        const float scale = 1.0f / float(pixels);
        for (int64_t k = 0; k < c; ++k)
            o[k] *= scale;
    }
    return y;
}

at::Tensor scaleShiftChannelsLast(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& shift)
{
    const int64_t c = x.size(1), pixels = x.size(0) * x.size(2) * x.size(3);
    at::Tensor y = at::empty_like(x, at::MemoryFormat::ChannelsLast);
    const float* src = x.data_ptr<float>();
    const float* a = scale.data_ptr<float>();
    const float* b = shift.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    at::parallel_for(0, pixels, grainFor(c), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
            scaleShift(dst + p * c, src + p * c, a, b, c);
    });
    return y;
}

bool concatChannelsLastApplies(const std::vector<at::Tensor>& parts)
{
    if (parts.size() < 2)
        return false;
    for (const at::Tensor& t : parts)
        if (t.dim() != 4 || t.scalar_type() != at::kFloat || !t.is_contiguous(at::MemoryFormat::ChannelsLast) ||
            t.size(0) != parts[0].size(0) || t.size(2) != parts[0].size(2) || t.size(3) != parts[0].size(3))
            return false;
    // At least one input really channels-last (not also plain contiguous), else at::cat's contiguous path serves.
    return std::any_of(parts.begin(), parts.end(), [](const at::Tensor& t) { return isChannelsLastFloat(t); });
}

at::Tensor concatChannelsLast(const std::vector<at::Tensor>& parts)
{
    const int64_t n = parts[0].size(0), h = parts[0].size(2), w = parts[0].size(3);
    int64_t total = 0;
    for (const at::Tensor& t : parts)
        total += t.size(1);
    at::Tensor y = at::empty({n, total, h, w}, parts[0].options().memory_format(at::MemoryFormat::ChannelsLast));
    float* dst = y.data_ptr<float>();
    std::vector<const float*> srcs;
    for (const at::Tensor& t : parts)
        srcs.push_back(t.data_ptr<float>());
    at::parallel_for(0, n * h * w, grainFor(total), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            float* o = dst + p * total;
            for (size_t k = 0; k < parts.size(); ++k) {
                const int64_t c = parts[k].size(1);
                std::memcpy(o, srcs[k] + p * c, size_t(c) * sizeof(float));
                o += c;
            }
        }
    });
    return y;
}

}  // namespace ramiel
