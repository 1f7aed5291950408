#include "core/runtime/torch/pooling_loops.h"

#include "core/runtime/torch/target_clones.h"

#include <algorithm>
#include <limits>

namespace ramiel {

RAMIEL_CLONES const float* maxOfRows(float* __restrict line, const float* const* rows, int64_t count, int64_t n)
{
    if (count == 1)
        return rows[0];
    const float* a = rows[0];
    const float* b = rows[1];
    if (count >= 3) {
        const float* c = rows[2];
        for (int64_t k = 0; k < n; ++k)
            line[k] = maxOrNaN(maxOrNaN(a[k], b[k]), c[k]);
    } else {
        for (int64_t k = 0; k < n; ++k)
            line[k] = maxOrNaN(a[k], b[k]);
    }
    for (int64_t r = 3; r < count; ++r) {
        const float* c = rows[r];
        for (int64_t k = 0; k < n; ++k)
            line[k] = maxOrNaN(line[k], c[k]);
    }
    return line;
}

RAMIEL_CLONES void maxOfColumnsPlanar(float* __restrict out, const float* __restrict line, int64_t width,
                                      int64_t outWidth, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation)
{
    // Outputs [first, last) have their whole window inside the line; the others are edges.
    const int64_t first = std::min(outWidth, (pad + stride - 1) / stride);
    const int64_t reach = width - 1 - (kernel - 1) * dilation + pad;  // the last output's window start, at most
    const int64_t last = std::clamp<int64_t>(reach < 0 ? 0 : reach / stride + 1, first, outWidth);
    auto edge = [&](int64_t o) {
        float m = -std::numeric_limits<float>::infinity();
        bool any = false;
        for (int64_t j = 0; j < kernel; ++j) {
            const int64_t x = o * stride - pad + j * dilation;
            if (x >= 0 && x < width) {
                m = any ? maxOrNaN(m, line[x]) : line[x];
                any = true;
            }
        }
        out[o] = m;
    };
    for (int64_t o = 0; o < first; ++o)
        edge(o);
    for (int64_t o = last; o < outWidth; ++o)
        edge(o);
    if (stride == 1) {  // a pass per window column, each over contiguous outputs
        for (int64_t o = first; o < last; ++o)
            out[o] = line[o - pad];
        for (int64_t j = 1; j < kernel; ++j) {
            const int64_t shift = j * dilation - pad;
            for (int64_t o = first; o < last; ++o)
                out[o] = maxOrNaN(out[o], line[o + shift]);
        }
        return;
    }
    for (int64_t o = first; o < last; ++o) {
        const float* a = line + (o * stride - pad);
        float m = a[0];
        for (int64_t j = 1; j < kernel; ++j)
            m = maxOrNaN(m, a[j * dilation]);
        out[o] = m;
    }
}

}  // namespace ramiel
