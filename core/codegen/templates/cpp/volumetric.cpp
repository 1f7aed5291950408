// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "onednn.cpp"
// </check-only>
// 3-D convolutions and max pooling (video models) on the 2-D helpers above, as the runtime runs
// them. A convolution whose window spans one plane (1 x kh x kw, the spatial half of R(2+1)D's
// and S3D's factorized convolutions) is a 2-D one over the N·D planes as images; one that spans
// one axis (kd x 1 x 1, the temporal half) a 2-D one over each sample as an image of D rows of
// H·W pixels. Both views are free on a channels-last-3d tensor, which is what they leave.

// A 3-D convolution's weights as the 2-D convolution's: [O, I, kh, kw] or [O, I, kd, 1], made
// once per weight tensor, so that conv2d finds its primitive by them.
const at::Tensor& planarWeights(const at::Tensor& weight, bool planes)
{
    static std::mutex mutex;
    static std::map<const void*, at::Tensor> made;  // the program's weights live as long as it does
    std::lock_guard<std::mutex> lock(mutex);
    at::Tensor& w = made[weight.unsafeGetTensorImpl()];
    if (!w.defined())
        w = (planes ? weight.select(2, 0) : weight.select(4, 0)).contiguous();
    return w;
}

// at::conv3d (then at::relu when relu).
at::Tensor conv3d(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias, const Ints& stride,
                  const Ints& padding, const Ints& dilation, int64_t groups, bool relu)
{
    const bool planes = weight.size(2) == 1 && stride[0] == 1 && padding[0] == 0;
    const bool depth = weight.size(3) == 1 && weight.size(4) == 1 && stride[1] == 1 && stride[2] == 1 &&
                       padding[1] == 0 && padding[2] == 0;
    if (input.scalar_type() != at::kFloat || !(planes || depth)) {
        at::Tensor y = at::conv3d(input, weight, bias, stride, padding, dilation, groups);
        return relu ? y.relu_() : y;
    }
    const at::Tensor x = input.contiguous(at::MemoryFormat::ChannelsLast3d);
    const int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
    const at::Tensor& flat = planarWeights(weight, planes);
    const Activation activation = relu ? Activation::Relu : Activation::None;
    if (planes) {
        const at::Tensor y = conv2d(x.transpose(1, 2).reshape({n * d, c, h, w}), flat, bias, Ints{stride[1], stride[2]},
                                    Ints{padding[1], padding[2]}, Ints{dilation[1], dilation[2]}, groups, activation);
        return y.reshape({n, d, y.size(1), y.size(2), y.size(3)}).transpose(1, 2);
    }
    const at::Tensor y = conv2d(x.reshape({n, c, d, h * w}), flat, bias, Ints{stride[0], 1}, Ints{padding[0], 0},
                                Ints{dilation[0], 1}, groups, activation);
    return y.reshape({n, y.size(1), y.size(2), h, w});
}

// at::max_pool3d without the indices, of a value that is finite whenever the model's inputs are
// (as max_pool2d's): each depth plane's max pooling (max_pool2d), then the maximum over each
// window's planes.
at::Tensor max_pool3d(const at::Tensor& input, const Ints& kernel, const Ints& stride, const Ints& padding,
                      const Ints& dilation, bool ceil)
{
    if (input.scalar_type() != at::kFloat || input.dim() != 5)
        return at::max_pool3d(input, kernel, stride, padding, dilation, ceil);
    const at::Tensor x = input.contiguous(at::MemoryFormat::ChannelsLast3d);
    const int64_t n = x.size(0), c = x.size(1), d = x.size(2), h = x.size(3), w = x.size(4);
    at::Tensor planes = max_pool2d(x.transpose(1, 2).reshape({n * d, c, h, w}), Ints{kernel[1], kernel[2]},
                                   Ints{stride[1], stride[2]}, Ints{padding[1], padding[2]}, Ints{dilation[1], dilation[2]}, ceil);
    planes = planes.reshape({n, d, c, planes.size(2), planes.size(3)});  // [N, D, C, H', W']
    const int64_t depth = pooledSize(d, kernel[0], stride[0], padding[0], dilation[0], ceil);
    const int64_t span = (depth - 1) * stride[0] + 1;  // the planes from a window's first to the last window's
    const int64_t right = (kernel[0] - 1) * dilation[0] + span - d - padding[0];
    if (padding[0] > 0 || right > 0)  // planes outside the input count as -inf
        planes = at::constant_pad_nd(planes, {0, 0, 0, 0, 0, 0, padding[0], std::max<int64_t>(right, 0)}, -kInf);
    at::Tensor y = planes.slice(1, 0, span, stride[0]);
    for (int64_t tap = 1; tap < kernel[0]; ++tap)
        y = at::maximum(y, planes.slice(1, tap * dilation[0], tap * dilation[0] + span, stride[0]));
    return y.transpose(1, 2);
}
