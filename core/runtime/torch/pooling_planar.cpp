#include "core/runtime/torch/pooling_planar.h"

#include "core/runtime/torch/fresh_tensor.h"
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

}  // namespace

bool maxPoolPlanarApplies(const at::Tensor& x, const Window& w)
{
    if (x.dim() != 5 || x.scalar_type() != at::kFloat || !x.is_contiguous() || x.numel() == 0 ||
        w.kernel.size() != 3 || w.strides.size() != 3 || w.dilations.size() != 3 || w.padBegin.size() != 3 ||
        !w.symmetric())
        return false;
    for (size_t i = 0; i < 3; ++i)
        if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 || w.padBegin[i] < 0 ||
            w.padBegin[i] * 2 > w.kernel[i])
            return false;
    const auto out = pooledSizes(x, w);
    return std::all_of(out.begin(), out.end(), [](int64_t s) { return s > 0; });  // else ATen's error
}

at::Tensor maxPoolPlanar(const at::Tensor& x, const Window& w)
{
    const int64_t planes = x.size(0) * x.size(1), d = x.size(2), h = x.size(3), wd = x.size(4);
    const auto sizes = pooledSizes(x, w);
    const int64_t od = sizes[0], oh = sizes[1], ow = sizes[2];
    const int64_t kd = w.kernel[0], kh = w.kernel[1];
    at::Tensor y = emptyFloat({x.size(0), x.size(1), od, oh, ow}, at::MemoryFormat::Contiguous);
    const float* src = x.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    // An output plane a task: it reads kd input planes.
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, kd * h * wd));
    at::parallel_for(0, planes * od, grain, [&](int64_t begin, int64_t end) {
        std::vector<float> planeMax(static_cast<size_t>(h * wd)), line(static_cast<size_t>(wd));
        std::vector<const float*> taps(size_t(std::max(kd, kh)));
        for (int64_t item = begin; item < end; ++item) {
            const float* in = src + (item / od) * d * h * wd;
            const int64_t z = item % od;
            int64_t count = 0;
            for (int64_t j = 0; j < kd; ++j) {
                const int64_t depth = z * w.strides[0] - w.padBegin[0] + j * w.dilations[0];
                if (depth >= 0 && depth < d)
                    taps[size_t(count++)] = in + depth * h * wd;
            }
            float* out = dst + item * oh * ow;
            if (count == 0) {  // a window inside the padding only
                std::fill(out, out + oh * ow, -std::numeric_limits<float>::infinity());
                continue;
            }
            const float* plane = maxOfRows(planeMax.data(), taps.data(), count, h * wd);
            for (int64_t row = 0; row < oh; ++row) {
                int64_t rows = 0;
                for (int64_t j = 0; j < kh; ++j) {
                    const int64_t r = row * w.strides[1] - w.padBegin[1] + j * w.dilations[1];
                    if (r >= 0 && r < h)
                        taps[size_t(rows++)] = plane + r * wd;
                }
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

}  // namespace ramiel
