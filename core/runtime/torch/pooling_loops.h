// The vector loops that max pooling is made of, in either layout (kernels_channels_last.cpp,
// pooling_3d.cpp), each built for AVX-512, AVX2 and the baseline (target_clones.h),
// and ATen's pooled size.
#pragma once

#include <cstdint>

namespace ramiel {

// ATen's max: a NaN in either operand wins, else (b > a ? b : a). Written so
// that it vectorizes as a max instruction (which returns a when either is NaN)
// and a fix-up for b's NaN: three instructions, not a blend of two compares.
inline float maxOrNaN(float a, float b)
{
    const float m = b > a ? b : a;
    return b != b ? b : m;
}

// Max pooling is separable: an output row is the max over its window's input
// rows (one pass down the rows, into `line`), then over each output's window
// columns of that line. On 3x3 windows that is 4 maxima per output in place of
// 8, each pass over contiguous floats (googlenet's 3x3, stride 1 pools on
// 28x28x192 took 3x ONNX Runtime's time done window by window). Returns the
// line: the max over `count` rows of `n` floats (the row itself when there is one).
const float* maxOfRows(float* __restrict line, const float* const* rows, int64_t count, int64_t n);

// One planar output row of `outWidth` from the max `line` of its window's rows
// (`width` floats): output o the max over line[o * stride - pad + j * dilation],
// j < kernel, of those inside the line (-infinity where none is).
void maxOfColumnsPlanar(float* __restrict out, const float* __restrict line, int64_t width, int64_t outWidth,
                        int64_t kernel, int64_t stride, int64_t pad, int64_t dilation);

// ATen's pooling output size (symmetric pads, ceil rule: the last window starts inside input or left pad).
inline int64_t pooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil)
{
    const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil ? stride - 1 : 0);
    int64_t out = span / stride + 1;
    if (ceil && (out - 1) * stride >= in + pad)
        --out;
    return out;
}

}  // namespace ramiel
