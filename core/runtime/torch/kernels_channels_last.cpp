// Hand-written kernels for float activations in the channels-last layout the
// convolutions leave: max and average pooling, global average pooling, inference batch
// normalization (a per-channel scale and shift, also on parts concatenated along channels,
// FusedBatchNorm's), group normalization (FusedGroupNorm's) and Concat along channels.
// Each pixel's channels are contiguous there, so every kernel is a
// loop over pixels with a vector loop over channels. libtorch 1.13's own
// versions are slower on these (max_pool2d computes an index per output,
// cat copies each input through a strided TensorIterator, mean reduces over
// non-inner dimensions): docs/runtime.md has the measurements. Work is split
// over output pixels (global pooling: over pixels or blocks of channels, by
// the shape alone), so results do not depend on the thread count.
#include "core/runtime/torch/channels_last.h"

#include "core/runtime/torch/activation_loops.h"
#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/pooling_loops.h"
#include "core/runtime/torch/target_clones.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace ramiel {

namespace {

// The output columns [begin, end) of one output row that a thread makes, and
// the input columns [lineFirst, lineEnd) they read: the line its window rows are
// reduced into.
struct ColumnRun {
    int64_t begin, end, lineFirst, lineEnd;
};

// Output columns [cols.begin, cols.end) of one row from its window rows' max
// `line` (the input's columns from cols.lineFirst on, c channels each): each
// output pixel the max over its window's columns inside the line. The whole
// run is one call: a call per pixel (through the clones' dispatch) costs more
// than the maxima on 64 channels.
RAMIEL_CLONES void maxOfColumns(float* dst, const float* __restrict line, int64_t c, int64_t wd, ColumnRun cols,
                                int64_t kw, int64_t sw, int64_t pw, int64_t dw)
{
    if (kw <= 3 && dw == 1) {  // a window's columns inside the line are a run of at most 3
        for (int64_t col = cols.begin; col < cols.end; ++col) {
            float* __restrict o = dst + (col - cols.begin) * c;
            const int64_t x0 = col * sw - pw;
            const int64_t from = std::max<int64_t>(x0, 0), to = std::min<int64_t>(x0 + kw, wd);
            const float* a = line + (from - cols.lineFirst) * c;
            if (to - from == 3)
                for (int64_t k = 0; k < c; ++k)
                    o[k] = maxOrNaN(maxOrNaN(a[k], a[c + k]), a[2 * c + k]);
            else if (to - from == 2)
                for (int64_t k = 0; k < c; ++k)
                    o[k] = maxOrNaN(a[k], a[c + k]);
            else
                std::memcpy(o, a, size_t(c) * sizeof(float));
        }
        return;
    }
    for (int64_t col = cols.begin; col < cols.end; ++col) {
        float* o = dst + (col - cols.begin) * c;  // also read, after the first group
        bool first = true;
        for (int64_t j = 0; j < kw;) {
            const float* p[3];
            int m = 0;
            for (; j < kw && m < 3; ++j) {
                const int64_t x = col * sw - pw + j * dw;
                if (x >= 0 && x < wd)
                    p[m++] = line + (x - cols.lineFirst) * c;
            }
            if (m == 0)
                continue;
            const float* a = first ? p[0] : o;
            const float* b = first ? (m > 1 ? p[1] : p[0]) : p[0];
            const float* e = first ? (m > 2 ? p[2] : b) : (m > 1 ? p[1] : p[0]);
            const float* f = first ? e : (m > 2 ? p[2] : e);
            for (int64_t k = 0; k < c; ++k)
                o[k] = maxOrNaN(maxOrNaN(maxOrNaN(a[k], b[k]), e[k]), f[k]);
            first = false;
        }
    }
}

// Average pooling, separable as max pooling: the sum over an output row's
// window rows (`line`; the row itself when there is one), then each output
// pixel the sum over its window's columns of the line, divided by
// `fixedCount` (count_include_pad) or else by the cells inside (rowCells times
// the columns inside).
RAMIEL_CLONES const float* sumOfRows(float* __restrict line, const float* const* rows, int64_t count, int64_t n)
{
    if (count == 1)
        return rows[0];
    const float* a = rows[0];
    const float* b = rows[1];
    if (count >= 3) {
        const float* c = rows[2];
        for (int64_t k = 0; k < n; ++k)
            line[k] = a[k] + b[k] + c[k];
    } else {
        for (int64_t k = 0; k < n; ++k)
            line[k] = a[k] + b[k];
    }
    for (int64_t r = 3; r < count; ++r) {
        const float* c = rows[r];
        for (int64_t k = 0; k < n; ++k)
            line[k] += c[k];
    }
    return line;
}

RAMIEL_CLONES void meanOfColumns(float* __restrict dst, const float* __restrict line, int64_t c, int64_t wd,
                                 ColumnRun cols, int64_t kw, int64_t sw, int64_t pw, int64_t rowCells,
                                 int64_t fixedCount)
{
    for (int64_t col = cols.begin; col < cols.end; ++col) {
        float* o = dst + (col - cols.begin) * c;
        const int64_t x0 = col * sw - pw;
        const int64_t from = std::max<int64_t>(x0, 0), to = std::min<int64_t>(x0 + kw, wd);  // columns inside
        const float divisor = float(fixedCount > 0 ? fixedCount : std::max<int64_t>(rowCells * (to - from), 1));
        const float* a = line + (from - cols.lineFirst) * c;
        if (to - from == 3) {
            const float* b = a + c;
            const float* e = b + c;
            for (int64_t k = 0; k < c; ++k)
                o[k] = (a[k] + b[k] + e[k]) / divisor;
            continue;
        }
        for (int64_t k = 0; k < c; ++k)
            o[k] = a[k];
        for (int64_t x = from + 1; x < to; ++x) {
            const float* b = line + (x - cols.lineFirst) * c;
            for (int64_t k = 0; k < c; ++k)
                o[k] += b[k];
        }
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

// s += x - pivot, q += (x - pivot)² element by element.
RAMIEL_CLONES void addShiftedMoments(float* __restrict s, float* __restrict q, const float* __restrict x,
                                     const float* __restrict pivot, int64_t n)
{
    for (int64_t c = 0; c < n; ++c) {
        const float d = x[c] - pivot[c];
        s[c] += d;
        q[c] += d * d;
    }
}

// o = ((i - pivot) - centre) * scale + shift: i - pivot is exact near a pivot of the
// same magnitude, and the small centre keeps its digits.
RAMIEL_CLONES void centreScaleShift(float* __restrict o, const float* __restrict i, const float* __restrict pivot,
                                    const float* __restrict centre, const float* __restrict scale,
                                    const float* __restrict shift, int64_t n)
{
    for (int64_t c = 0; c < n; ++c)
        o[c] = ((i[c] - pivot[c]) - centre[c]) * scale[c] + shift[c];
}

RAMIEL_CLONES void scaleBy(float* o, const float* i, const float* __restrict scale, int64_t n)
{
    for (int64_t c = 0; c < n; ++c)
        o[c] = i[c] * scale[c];
}

RAMIEL_CLONES void addInto(float* __restrict o, const float* __restrict i, int64_t n)
{
    for (int64_t c = 0; c < n; ++c)
        o[c] += i[c];
}

// The sum over `pixels` pixels (c floats apart) of `width` channels, added pixel by
// pixel in order in `sum` (width floats, kept in the first-level cache), times `scale`
// into `out`.
RAMIEL_CLONES void sumOverPixels(float* __restrict out, float* __restrict sum, const float* __restrict src,
                                 int64_t pixels, int64_t c, int64_t width, float scale)
{
    std::fill(sum, sum + width, 0.0f);
    for (int64_t p = 0; p < pixels; ++p)
        for (int64_t k = 0; k < width; ++k)
            sum[k] += src[p * c + k];
    for (int64_t k = 0; k < width; ++k)
        out[k] = sum[k] * scale;
}

// o (c floats) = the `count` partial sums at p (c floats each), added in order, times scale.
void meanOfPartialSums(float* o, const float* p, int64_t count, int64_t c, float scale)
{
    std::memcpy(o, p, size_t(c) * sizeof(float));
    for (int64_t k = 1; k < count; ++k)
        addInto(o, p + k * c, c);
    for (int64_t j = 0; j < c; ++j)
        o[j] *= scale;
}

// A pixel's run of output channels from two sources taking turns (a channel
// shuffle in two groups): o[2i] = a[i], o[2i + 1] = b[i].
RAMIEL_CLONES void interleave2(float* __restrict o, const float* __restrict a, const float* __restrict b, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        o[2 * i] = a[i];
        o[2 * i + 1] = b[i];
    }
}

// One image row of `w` pixels from `c` channel planes (`plane` floats apart)
// into `w` pixels of `c` interleaved channels; three channels (RGB) unrolled.
RAMIEL_CLONES void interleaveRow(float* __restrict out, const float* __restrict in, int64_t plane, int64_t w, int64_t c)
{
    if (c == 3) {
        const float* r = in;
        const float* g = in + plane;
        const float* b = in + 2 * plane;
        for (int64_t x = 0; x < w; ++x) {
            out[3 * x] = r[x];
            out[3 * x + 1] = g[x];
            out[3 * x + 2] = b[x];
        }
        return;
    }
    for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k)
            out[x * c + k] = in[k * plane + x];
}


}  // namespace

bool reluInPlaceApplies(const at::Tensor& x)
{
    return x.scalar_type() == at::kFloat && x.is_non_overlapping_and_dense();
}

at::Tensor reluInPlace(const at::Tensor& x)
{
    float* data = x.data_ptr<float>();
    at::parallel_for(0, x.numel(), kGrainElements / 2, [&](int64_t begin, int64_t end) { reluRun(data + begin, end - begin); });
    return x;
}

bool isChannelsLastFloat(const at::Tensor& x)
{
    return x.dim() == 4 && x.scalar_type() == at::kFloat && x.size(1) > 1 &&
           x.is_contiguous(at::MemoryFormat::ChannelsLast) && !x.is_contiguous();
}

bool isPlanarImage(const at::Tensor& x)
{
    return x.dim() == 4 && x.scalar_type() == at::kFloat && x.size(1) <= 4 && x.is_contiguous() &&
           !x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

at::Tensor asChannelsLast(const at::Tensor& x)
{
    if (!isPlanarImage(x))
        return x.contiguous(at::MemoryFormat::ChannelsLast);
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    at::Tensor y = emptyFloat(x.sizes(), at::MemoryFormat::ChannelsLast);
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    parallelChunks(n * h, grainFor(w * c) / 4, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const int64_t image = row / h, line = row % h;
            interleaveRow(dst + row * w * c, src + (image * c * h + line) * w, h * w, w, c);
        }
    });
    return y;
}

void interleaveImageRows(const float* image, int64_t c, int64_t h, int64_t w, int64_t row0, int64_t rows,
                         float* out)
{
    for (int64_t row = 0; row < rows; ++row)
        interleaveRow(out + row * w * c, image + (row0 + row) * w, h * w, w, c);
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

// The rows of an output row's window that lie inside its image (`top`: the
// window's first row, negative in the padding; `dh`: the dilation).
struct WindowRows {
    WindowRows(const float* image, int64_t top, int64_t kh, int64_t dh, int64_t h, int64_t rowFloats)
        : rows(kh <= 16 ? fixed : (more.resize(size_t(kh)), more.data()))
    {
        for (int64_t i = 0; i < kh; ++i)
            if (top + i * dh >= 0 && top + i * dh < h)
                rows[count++] = image + (top + i * dh) * rowFloats;
    }
    WindowRows(const WindowRows&) = delete;  // rows may point into fixed
    WindowRows& operator=(const WindowRows&) = delete;

    const float* fixed[16];
    std::vector<const float*> more;
    const float** rows;
    int64_t count = 0;
};

// A pooled output of oh x ow, channels-last, its n * oh * ow pixels split evenly over
// the threads: split by rows, an output of fewer rows than threads left threads idle
// (GoogLeNet's and SqueezeNet's have 7 to 56), and one of more gave some threads a
// row more than others. `row(out, image, top, cols, line)` makes the columns `cols` of
// one output row from its image (from input column cols.lineFirst on), whose window
// starts at input row `top` (negative inside the padding), with `line` scratch of one
// input row.
template <typename Row>
at::Tensor pooledPixels(const at::Tensor& x, const Window& w, int64_t oh, int64_t ow, Row&& row)
{
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
    const int64_t kw = w.kernel[1], sw = w.strides[1], pw = w.padBegin[1], dw = w.dilations[1];
    at::Tensor y = emptyFloat({n, c, oh, ow}, at::MemoryFormat::ChannelsLast);
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    at::parallel_for(0, n * oh * ow, grainFor(c * w.kernel[0] * kw), [&](int64_t begin, int64_t end) {
        const std::unique_ptr<float[]> line(new float[size_t(wd * c)]);
        for (int64_t p = begin; p < end;) {
            const int64_t r = p / ow, col = p % ow, last = std::min(ow, col + end - p);
            const ColumnRun run{col, last, std::max<int64_t>(col * sw - pw, 0),
                                std::min<int64_t>((last - 1) * sw - pw + (kw - 1) * dw + 1, wd)};
            row(dst + p * c, src + ((r / oh) * h * wd + run.lineFirst) * c, (r % oh) * w.strides[0] - w.padBegin[0],
                run, line.get());
            p += last - col;
        }
    });
    return y;
}

at::Tensor maxPoolChannelsLast(const at::Tensor& x, const Window& w)
{
    const int64_t c = x.size(1), h = x.size(2), wd = x.size(3);
    const int64_t kh = w.kernel[0], kw = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
    const int64_t ph = w.padBegin[0], pw = w.padBegin[1], dh = w.dilations[0], dw = w.dilations[1];
    const int64_t oh = pooledSize(h, kh, ph, sh, dh, w.ceil), ow = pooledSize(wd, kw, pw, sw, dw, w.ceil);
    return pooledPixels(x, w, oh, ow, [&](float* out, const float* image, int64_t top, ColumnRun cols, float* line) {
        const WindowRows window(image, top, kh, dh, h, wd * c);
        const int64_t floats = (cols.lineEnd - cols.lineFirst) * c;
        maxOfColumns(out, maxOfRows(line, window.rows, window.count, floats), c, wd, cols, kw, sw, pw, dw);
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
    return pooledPixels(x, w, oh, ow, [&](float* out, const float* image, int64_t top, ColumnRun cols, float* line) {
        const WindowRows window(image, top, kh, 1, h, wd * c);
        const int64_t floats = (cols.lineEnd - cols.lineFirst) * c;
        meanOfColumns(out, sumOfRows(line, window.rows, window.count, floats), c, wd, cols, kw, sw, pw, window.count,
                      countIncludePad ? kh * kw : 0);
    });
}

at::Tensor globalAveragePoolChannelsLast(const at::Tensor& x)
{
    const int64_t n = x.size(0), c = x.size(1), pixels = x.size(2) * x.size(3);
    at::Tensor y = emptyFloat({n, c, 1, 1}, at::MemoryFormat::Contiguous);
    if (pixels == 0 || c == 0)
        return y.fill_(pixels == 0 ? NAN : 0.0f);  // the mean of nothing, as ATen's
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    // Wide pixels (squeeze-excite's 1344-3840 channels at 7x7 or 14x14): blocks
    // of kBlock channels, each summed over a run of pixels (512 bytes a pixel, a
    // stream the prefetcher follows); chunks of a few pixels each needed partial
    // sums as wide as a pixel, added up on one thread after (efficientnet_v2_l's
    // pools on one thread 1.70 -> 0.92 ms; ONNX Runtime 1.10). Where an image has two
    // to four threads, it is split into as many runs of pixels, one a thread,
    // as the convolution before shares out its rows, and the runs' sums are added
    // after: each core reads what it wrote, and the squeeze-excite product that
    // then scales the same pixels in place finds none of them in the other core's
    // cache. Split by blocks of channels instead, efficientnet_v2_l's pools took
    // 1.00 ms on two threads and its products after them 1.96 ms (1.35 on one
    // thread); split so, 0.69 and 0.72. With more threads the convolution's rows no
    // longer match (oneDNN splits finer than rows where they do not divide among its
    // threads), and one thread would add up all the runs' sums after.
    constexpr int64_t kBlock = 128, kWide = 1024, kMaxRuns = 4;
    if (c >= kWide) {
        const int64_t blocks = (c + kBlock - 1) / kBlock, runs = std::min(at::get_num_threads() / n, pixels);
        const float scale = 1.0f / float(pixels);
        if (runs < 2 || runs > kMaxRuns) {
            at::parallel_for(0, n * blocks, 1, [&](int64_t begin, int64_t end) {
                float sum[kBlock];
                for (int64_t i = begin; i < end; ++i) {
                    const int64_t b = i / blocks, first = i % blocks * kBlock;
                    sumOverPixels(dst + b * c + first, sum, src + b * pixels * c + first, pixels, c,
                                  std::min(kBlock, c - first), scale);
                }
            });
            return y;
        }
        std::vector<float> partial(size_t(n * runs * c));
        at::parallel_for(0, n * runs, 1, [&](int64_t begin, int64_t end) {
            float sum[kBlock];
            for (int64_t i = begin; i < end; ++i) {
                const int64_t b = i / runs, r = i % runs, first = r * pixels / runs, last = (r + 1) * pixels / runs;
                for (int64_t k = 0; k < c; k += kBlock)
                    sumOverPixels(partial.data() + i * c + k, sum, src + (b * pixels + first) * c + k, last - first,
                                  c, std::min(kBlock, c - k), 1.0f);
            }
        });
        for (int64_t b = 0; b < n; ++b)
            meanOfPartialSums(dst + b * c, partial.data() + b * runs * c, runs, c, scale);
        return y;
    }
    // Chunks of whole pixels (c contiguous floats each) are summed into partial sums
    // of their own, then each image's partial sums are added in order: the reads
    // stream, and the result does not depend on which thread ran a chunk. (Blocks
    // of channels walked over every pixel read 16-32 floats a pixel: 2x ONNX
    // Runtime's time on efficientnet_b0.)
    const int64_t span = std::max<int64_t>(1, (int64_t(1) << 13) / c);  // pixels a chunk
    const int64_t chunks = (pixels + span - 1) / span;
    std::vector<float> partial(size_t(n * chunks * c), 0.0f);
    // Split even when small: the second thread wakes here rather than in the
    // classifier that usually follows (pooling small tensors on one thread made
    // resnet18's pooling 0.010 ms and its Gemm 0.094, together no faster). Each
    // thread a fixed contiguous share of the pixels (at::parallel_for), which
    // finds in its own core's cache what its share of the convolution before
    // wrote: efficientnet_b0's 16 pools on two threads 0.37-0.43 -> 0.17-0.19 ms
    // (chunks taken as threads arrived read across cores; ONNX Runtime 0.18).
    at::parallel_for(0, n * chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / chunks, first = i % chunks * span, last = std::min(pixels, first + span);
            float* sum = partial.data() + i * c;
            for (int64_t p = first; p < last; ++p)
                addInto(sum, src + (b * pixels + p) * c, c);
        }
    });
    for (int64_t b = 0; b < n; ++b)
        meanOfPartialSums(dst + b * c, partial.data() + b * chunks * c, chunks, c, 1.0f / float(pixels));
    return y;
}

bool channelScaleChannelsLastApplies(const at::Tensor& x, const at::Tensor& s)
{
    return isChannelsLastFloat(x) && s.scalar_type() == at::kFloat && s.dim() == 4 &&
           (s.size(0) == x.size(0) || s.size(0) == 1) && s.size(1) == x.size(1) && s.size(2) == 1 && s.size(3) == 1;
}

at::Tensor channelScaleChannelsLast(const at::Tensor& x, const at::Tensor& s, bool inPlace)
{
    const int64_t c = x.size(1), perImage = x.size(2) * x.size(3), pixels = x.size(0) * perImage;
    at::Tensor y = inPlace ? x : emptyFloat(x.sizes(), at::MemoryFormat::ChannelsLast);
    const at::Tensor scale = s.contiguous();
    const int64_t scaleStride = s.size(0) == 1 ? 0 : c;
    const float* src = x.data_ptr<float>();
    const float* a = scale.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    at::parallel_for(0, pixels, grainFor(c), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
            scaleBy(dst + p * c, src + p * c, a + p / perImage * scaleStride, c);
    });
    return y;
}

namespace {

// Every part a 4-D float tensor laid out channels-last, of the first's N, H and W, and at
// least one really channels-last (not also plain contiguous, where ATen's contiguous path serves).
bool channelsLastParts(const std::vector<at::Tensor>& parts)
{
    for (const at::Tensor& t : parts)
        if (t.dim() != 4 || t.scalar_type() != at::kFloat || !t.is_contiguous(at::MemoryFormat::ChannelsLast) ||
            t.size(0) != parts[0].size(0) || t.size(2) != parts[0].size(2) || t.size(3) != parts[0].size(3))
            return false;
    return std::any_of(parts.begin(), parts.end(), [](const at::Tensor& t) { return isChannelsLastFloat(t); });
}

// Parts (channelsLastParts) laid side by side along channels: each one's data and channel
// count, and the channels-last output [N, their total, H, W] they make.
struct SideBySide {
    std::vector<const float*> src;
    std::vector<int64_t> channels;
    int64_t total = 0, pixels = 0;
    at::Tensor out;

    explicit SideBySide(const std::vector<at::Tensor>& parts)
    {
        for (const at::Tensor& t : parts) {
            src.push_back(t.data_ptr<float>());
            channels.push_back(t.size(1));
            total += t.size(1);
        }
        const int64_t n = parts[0].size(0), h = parts[0].size(2), w = parts[0].size(3);
        pixels = n * h * w;
        out = emptyFloat({n, total, h, w}, at::MemoryFormat::ChannelsLast);
    }
};

}  // namespace

bool concatChannelsLastApplies(const std::vector<at::Tensor>& parts)
{
    return parts.size() >= 2 && channelsLastParts(parts);
}

at::Tensor concatChannelsLast(const std::vector<at::Tensor>& parts)
{
    const SideBySide x(parts);
    float* dst = x.out.data_ptr<float>();
    at::parallel_for(0, x.pixels, grainFor(x.total), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            float* o = dst + p * x.total;
            for (size_t k = 0; k < parts.size(); ++k) {
                std::memcpy(o, x.src[k] + p * x.channels[k], size_t(x.channels[k]) * sizeof(float));
                o += x.channels[k];
            }
        }
    });
    return x.out;
}

bool batchNormChannelsLastApplies(const std::vector<at::Tensor>& parts, int64_t channels)
{
    if (parts.empty() || !channelsLastParts(parts))
        return false;
    int64_t total = 0;
    for (const at::Tensor& t : parts)
        total += t.size(1);
    return total == channels;
}

at::Tensor batchNormChannelsLast(const std::vector<at::Tensor>& parts, const at::Tensor& scale,
                                 const at::Tensor& shift, const std::function<void(float*, int64_t)>& activation)
{
    const SideBySide x(parts);
    float* dst = x.out.data_ptr<float>();
    const float* a = scale.data_ptr<float>();
    const float* b = shift.data_ptr<float>();
    const int64_t block = std::max<int64_t>(1, 4096 / x.total);  // pixels of about 16 KiB, for the activation
    at::parallel_for(0, x.pixels, grainFor(x.total), [&](int64_t begin, int64_t end) {
        for (int64_t p0 = begin; p0 < end; p0 += block) {
            const int64_t p1 = std::min(end, p0 + block);
            for (int64_t p = p0; p < p1; ++p) {
                int64_t at = 0;
                for (size_t k = 0; k < parts.size(); ++k) {
                    scaleShift(dst + p * x.total + at, x.src[k] + p * x.channels[k], a + at, b + at, x.channels[k]);
                    at += x.channels[k];
                }
            }
            if (activation)
                activation(dst + p0 * x.total, (p1 - p0) * x.total);
        }
    });
    return x.out;
}

bool groupNormChannelsLastApplies(const at::Tensor& x, int64_t groups)
{
    return isChannelsLastFloat(x) && groups >= 1 && x.size(1) % groups == 0;
}

at::Tensor groupNormChannelsLast(const at::Tensor& x, int64_t groups, const at::Tensor& scale, const at::Tensor& bias,
                                 float epsilon, const std::function<void(float*, int64_t)>& activation)
{
    const int64_t n = x.size(0), c = x.size(1), hw = x.size(2) * x.size(3), perGroup = c / groups;
    const float* src = x.data_ptr<float>();
    // Each image's group is shifted by its first channel at the image's first pixel: the sums
    // of squares then hold the variance, not the mean's square, whatever the mean.
    std::vector<float> pivot(size_t(n * c));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < c; ++k)
            pivot[size_t(i * c + k)] = src[i * hw * c + k / perGroup * perGroup];
    // Pass 1: per channel, float sums over 16 pixels, added in double over a chunk of 256;
    // per chunk, the groups' sums. Chunks are fixed, whatever the threads.
    constexpr int64_t kBlock = 16, kChunk = 256;
    const int64_t chunks = (hw + kChunk - 1) / kChunk;
    std::vector<double> partial(size_t(n * chunks * groups * 2));
    at::parallel_for(0, n * chunks, std::max<int64_t>(1, kGrainElements / (kChunk * c)), [&](int64_t begin, int64_t end) {
        const size_t width = size_t(c);
        std::vector<float> s(width), q(width);
        std::vector<double> sums(width), squares(width);
        for (int64_t item = begin; item < end; ++item) {
            const int64_t image = item / chunks, p0 = item % chunks * kChunk, p1 = std::min(hw, p0 + kChunk);
            const float* pixels = src + image * hw * c;
            const float* piv = pivot.data() + image * c;
            std::fill(sums.begin(), sums.end(), 0.0);
            std::fill(squares.begin(), squares.end(), 0.0);
            for (int64_t b = p0; b < p1; b += kBlock) {
                std::fill(s.begin(), s.end(), 0.0f);
                std::fill(q.begin(), q.end(), 0.0f);
                for (int64_t p = b; p < std::min(p1, b + kBlock); ++p)
                    addShiftedMoments(s.data(), q.data(), pixels + p * c, piv, c);
                for (int64_t k = 0; k < c; ++k) {
                    sums[size_t(k)] += s[size_t(k)];
                    squares[size_t(k)] += q[size_t(k)];
                }
            }
            double* out = partial.data() + item * groups * 2;
            for (int64_t g = 0; g < groups; ++g) {
                double gs = 0, gq = 0;
                for (int64_t k = g * perGroup; k < (g + 1) * perGroup; ++k) {
                    gs += sums[size_t(k)];
                    gq += squares[size_t(k)];
                }
                out[2 * g] = gs;
                out[2 * g + 1] = gq;
            }
        }
    });
    // Each image's and channel's mean less its pivot, scale and shift: y = ((x - pivot) - m) * a + b
    // (x * a' + b', or x less a mean rounded to float, would lose the digits a large mean cancels).
    const size_t entries = size_t(n * c);
    std::vector<float> m(entries), a(entries), b(entries);
    const float* w = scale.data_ptr<float>();
    const float* beta = bias.data_ptr<float>();
    const double count = double(perGroup) * double(hw);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t g = 0; g < groups; ++g) {
            double gs = 0, gq = 0;
            for (int64_t k = 0; k < chunks; ++k) {
                gs += partial[size_t(((i * chunks + k) * groups + g) * 2)];
                gq += partial[size_t(((i * chunks + k) * groups + g) * 2 + 1)];
            }
            const double shiftedMean = gs / count;
            const double variance = std::max(0.0, gq / count - shiftedMean * shiftedMean);
            const double invStd = 1.0 / std::sqrt(variance + double(epsilon));
            for (int64_t k = g * perGroup; k < (g + 1) * perGroup; ++k) {
                m[size_t(i * c + k)] = float(shiftedMean);
                a[size_t(i * c + k)] = float(invStd * double(w[k]));
                b[size_t(i * c + k)] = beta[k];
            }
        }
    // Pass 2: each pixel centred, scaled and shifted, the activation over blocks of a few pixels
    // (fixed blocks: a vector loop's tail falls on the same elements whatever the threads).
    at::Tensor out = emptyFloat({n, c, x.size(2), x.size(3)}, at::MemoryFormat::ChannelsLast);
    float* dst = out.data_ptr<float>();
    const int64_t block = std::max<int64_t>(1, 4096 / c), blocks = (n * hw + block - 1) / block;
    at::parallel_for(0, blocks, std::max<int64_t>(1, kGrainElements / (block * c)), [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
            const int64_t p0 = k * block, p1 = std::min(n * hw, p0 + block);
            for (int64_t p = p0; p < p1; ++p) {
                const int64_t at = p / hw * c;
                centreScaleShift(dst + p * c, src + p * c, pivot.data() + at, m.data() + at, a.data() + at,
                                 b.data() + at, c);
            }
            if (activation)
                activation(dst + p0 * c, (p1 - p0) * c);
        }
    });
    return out;
}

bool channelShuffleChannelsLastApplies(const std::vector<at::Tensor>& parts)
{
    return !parts.empty() && channelsLastParts(parts);
}

std::vector<at::Tensor> channelShuffleChannelsLast(const std::vector<at::Tensor>& parts, int64_t group,
                                                   const std::vector<int64_t>& split)
{
    const int64_t n = parts[0].size(0), h = parts[0].size(2), w = parts[0].size(3), pixels = n * h * w;
    // Where each channel of the concatenation lives: its part and its channel there.
    std::vector<const float*> srcs;
    std::vector<int64_t> widths, partOf, channelOf;
    for (size_t k = 0; k < parts.size(); ++k) {
        srcs.push_back(parts[k].data_ptr<float>());
        widths.push_back(parts[k].size(1));
        for (int64_t c = 0; c < parts[k].size(1); ++c) {
            partOf.push_back(int64_t(k));
            channelOf.push_back(c);
        }
    }
    const int64_t total = int64_t(partOf.size()), perGroup = total / group;
    // Each output, channels [first, first + count) of the shuffled tensor. With
    // two groups, an output starting and ending on a whole pair of channels whose
    // two runs of sources each lie in one part is an interleaving of two
    // contiguous runs; any other reads channel by channel through a table.
    struct Cut {
        at::Tensor out;
        float* dst;
        int64_t count;
        bool pairs;
        const float* a;  // pairs: the runs' first pixel, and each run's pixel stride
        const float* b;
        int64_t strideA, strideB;
        std::vector<int64_t> part, channel;  // else: the source of each output channel
    };
    std::vector<Cut> cuts;
    int64_t first = 0;
    for (int64_t count : split) {
        Cut cut{emptyFloat({n, count, h, w}, at::MemoryFormat::ChannelsLast),
                nullptr, count, false, nullptr, nullptr, 0, 0, {}, {}};
        cut.dst = cut.out.data_ptr<float>();
        auto source = [&](int64_t j) { return (j % group) * perGroup + j / group; };
        if (group == 2 && first % 2 == 0 && count % 2 == 0 && count > 0) {
            const int64_t a0 = source(first), a1 = source(first + count - 2);
            const int64_t b0 = source(first + 1), b1 = source(first + count - 1);
            if (partOf[size_t(a0)] == partOf[size_t(a1)] && partOf[size_t(b0)] == partOf[size_t(b1)]) {
                cut.pairs = true;
                cut.a = srcs[size_t(partOf[size_t(a0)])] + channelOf[size_t(a0)];
                cut.strideA = widths[size_t(partOf[size_t(a0)])];
                cut.b = srcs[size_t(partOf[size_t(b0)])] + channelOf[size_t(b0)];
                cut.strideB = widths[size_t(partOf[size_t(b0)])];
            }
        }
        if (!cut.pairs)
            for (int64_t j = first; j < first + count; ++j) {
                cut.part.push_back(partOf[size_t(source(j))]);
                cut.channel.push_back(channelOf[size_t(source(j))]);
            }
        cuts.push_back(std::move(cut));
        first += count;
    }
    auto body = [&](int64_t begin, int64_t end) {
        for (const Cut& cut : cuts) {
            if (cut.pairs) {
                for (int64_t p = begin; p < end; ++p)
                    interleave2(cut.dst + p * cut.count, cut.a + p * cut.strideA, cut.b + p * cut.strideB, cut.count / 2);
                continue;
            }
            for (int64_t p = begin; p < end; ++p) {
                float* o = cut.dst + p * cut.count;
                for (int64_t j = 0; j < cut.count; ++j)
                    o[j] = srcs[size_t(cut.part[size_t(j)])][p * widths[size_t(cut.part[size_t(j)])] + cut.channel[size_t(j)]];
            }
        }
    };
    // Each thread a contiguous share of the pixels (ATen's fixed split), at least
    // 8,192 floats of them. Chunks that the threads took as they arrived
    // (parallel_chunks.h) were slower on two threads, shufflenet_v2_x1_0's 16
    // shuffles 0.18 against 0.14 ms: the threads here are awake (a convolution
    // ran just before), and a fixed half reads and writes, it seems, the pixels
    // its own core's share of the convolutions touched.
    at::parallel_for(0, pixels, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, total)), body);
    std::vector<at::Tensor> outs;
    for (Cut& cut : cuts)
        outs.push_back(std::move(cut.out));
    return outs;
}

}  // namespace ramiel
