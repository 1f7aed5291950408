#include "core/runtime/torch/pooling_3d.h"

#include "core/runtime/torch/channels_last.h"
#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/pooling_loops.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

namespace ramiel {

namespace {

std::array<int64_t, 3> pooledSizes(const at::Tensor& x, const Window& w)
{
    std::array<int64_t, 3> out{};
    for (size_t i = 0; i < 3; ++i)
        out[i] = pooledSize(x.size(int64_t(i) + 2), w.kernel[i], w.padBegin[i], w.strides[i], w.dilations[i], w.ceil);
    return out;
}

// The window of output o along axis `axis` of `w`: the starts of its slices inside the
// input (`size` of them, `step` floats apart from `base`) into `taps`; returns their count.
int64_t windowTaps(const Window& w, size_t axis, int64_t o, int64_t size, const float* base, int64_t step,
                   const float** taps)
{
    int64_t count = 0;
    for (int64_t j = 0; j < w.kernel[axis]; ++j) {
        const int64_t at = o * w.strides[axis] - w.padBegin[axis] + j * w.dilations[axis];
        if (at >= 0 && at < size)
            taps[count++] = base + at * step;
    }
    return count;
}

bool channelsLast3d(const at::Tensor& x)
{
    return x.size(1) > 1 && x.is_contiguous(at::MemoryFormat::ChannelsLast3d) && !x.is_contiguous();
}

}  // namespace

bool maxPool3dApplies(const at::Tensor& x, const Window& w)
{
    if (x.dim() != 5 || x.scalar_type() != at::kFloat || x.numel() == 0 || w.kernel.size() != 3 ||
        w.strides.size() != 3 || w.dilations.size() != 3 || w.padBegin.size() != 3 || !w.symmetric() ||
        !(x.is_contiguous() || channelsLast3d(x)))
        return false;
    for (size_t i = 0; i < 3; ++i)
        if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.padBegin[i] < 0 ||
            w.padBegin[i] * 2 > w.kernel[i])
            return false;
    const auto out = pooledSizes(x, w);
    return std::all_of(out.begin(), out.end(), [](int64_t s) { return s > 0; });  // else ATen's error
}

namespace {

// Channels-last: the max of each output depth's window planes ([H, W, C] each, contiguous),
// then the 2-D kernel on the N·od planes as images.
at::Tensor maxPoolChannelsLast3d(const at::Tensor& x, const Window& w)
{
    const int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), wd = x.size(4);
    const int64_t od = pooledSizes(x, w)[0], kd = w.kernel[0], plane = h * wd * c;
    at::Tensor planes;
    if (kd == 1 && w.strides[0] == 1 && w.padBegin[0] == 0) {
        planes = x.as_strided({n * d, c, h, wd}, {plane, 1, wd * c, c});
    } else {
        planes = emptyFloat({n * od, c, h, wd}, at::MemoryFormat::ChannelsLast);
        const float* src = x.data_ptr<float>();
        float* dst = planes.data_ptr<float>();
        at::parallel_for(0, n * od, grainFor(kd * plane), [&](int64_t begin, int64_t end) {
            std::vector<const float*> taps(static_cast<size_t>(kd));
            for (int64_t item = begin; item < end; ++item) {
                const int64_t count = windowTaps(w, 0, item % od, d, src + item / od * d * plane, plane, taps.data());
                float* out = dst + item * plane;
                if (count == 0)  // a window inside the padding only
                    std::fill(out, out + plane, -std::numeric_limits<float>::infinity());
                else if (const float* m = maxOfRows(out, taps.data(), count, plane); m != out)
                    std::copy(m, m + plane, out);
            }
        });
    }
    Window flat;
    flat.kernel = {w.kernel[1], w.kernel[2]};
    flat.strides = {w.strides[1], w.strides[2]};
    flat.dilations = {w.dilations[1], w.dilations[2]};
    flat.padBegin = flat.padEnd = {w.padBegin[1], w.padBegin[2]};
    flat.ceil = w.ceil;
    const at::Tensor y = maxPoolChannelsLast(planes, flat);  // [N·od, C, oh, ow] channels-last
    const int64_t oh = y.size(2), ow = y.size(3);
    return y.as_strided({n, c, od, oh, ow}, {od * oh * ow * c, 1, oh * ow * c, ow * c, c});
}

// Plain layout: an output plane a task, reading kd input planes.
at::Tensor maxPoolPlanar(const at::Tensor& x, const Window& w)
{
    const int64_t planes = x.size(0) * x.size(1), d = x.size(2), h = x.size(3), wd = x.size(4);
    const auto sizes = pooledSizes(x, w);
    const int64_t od = sizes[0], oh = sizes[1], ow = sizes[2];
    const int64_t kd = w.kernel[0], kh = w.kernel[1];
    at::Tensor y = emptyFloat({x.size(0), x.size(1), od, oh, ow}, at::MemoryFormat::Contiguous);
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    at::parallel_for(0, planes * od, grainFor(kd * h * wd), [&](int64_t begin, int64_t end) {
        std::vector<float> planeMax(static_cast<size_t>(h * wd)), line(static_cast<size_t>(wd));
        std::vector<const float*> taps(size_t(std::max(kd, kh)));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t count = windowTaps(w, 0, item % od, d, src + item / od * d * h * wd, h * wd, taps.data());
            float* out = dst + item * oh * ow;
            if (count == 0) {  // a window inside the padding only
                std::fill(out, out + oh * ow, -std::numeric_limits<float>::infinity());
                continue;
            }
            const float* plane = maxOfRows(planeMax.data(), taps.data(), count, h * wd);
            for (int64_t row = 0; row < oh; ++row) {
                const int64_t rows = windowTaps(w, 1, row, h, plane, wd, taps.data());
                if (rows == 0) {
                    std::fill(out + row * ow, out + (row + 1) * ow, -std::numeric_limits<float>::infinity());
                    continue;
                }
                maxOfColumnsPlanar(out + row * ow, maxOfRows(line.data(), taps.data(), rows, wd), wd, ow, w.kernel[2],
                                   w.strides[2], w.padBegin[2], w.dilations[2]);
            }
        }
    });
    return y;
}

}  // namespace

at::Tensor maxPool3d(const at::Tensor& x, const Window& w)
{
    return x.is_contiguous() ? maxPoolPlanar(x, w) : maxPoolChannelsLast3d(x, w);
}

}  // namespace ramiel
