// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Int8 operators in the form Ramiel's quantize pass writes them, run as its runtime runs them:
// libtorch's quantized kernels (oneDNN's engine, else QNNPACK's) on weights packed once. Quantized
// values travel between them as plain uint8 and int8 tensors, as ONNX defines them.

// A scale or zero point shaped to broadcast along `axis` of a rank-`rank` tensor.
at::Tensor alongAxis(const at::Tensor& t, int64_t axis, int64_t rank)
{
    if (t.numel() == 1)
        return t.reshape({});
    Ints shape(size_t(rank), 1);
    shape[size_t(axis)] = -1;
    return t.reshape(shape);
}

// ONNX's QuantizeLinear: round(x / scale) + zero point (half to even), saturated to [low, high].
at::Tensor quantizeLinear(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& zeroPoint, int64_t axis,
                          at::ScalarType type, double low, double high)
{
    at::Tensor y = at::round(x.to(at::kFloat) / alongAxis(scale.to(at::kFloat), axis, x.dim()));
    if (zeroPoint.defined())
        y += alongAxis(zeroPoint.to(at::kFloat), axis, x.dim());
    return y.clamp_(low, high).to(type);
}

// ONNX's DequantizeLinear: (x - zero point) * scale, in float.
at::Tensor dequantizeLinear(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& zeroPoint, int64_t axis)
{
    at::Tensor y = x.to(at::kFloat);
    if (zeroPoint.defined())
        y = y - alongAxis(zeroPoint.to(at::kFloat), axis, x.dim());
    return y * alongAxis(scale.to(at::kFloat), axis, x.dim());
}

// ONNX's DynamicQuantizeLinear: x to uint8 over the range of its values and 0 (NaN left out and
// quantized to 0), with that scale and zero point, computed in float as the runtime computes them.
std::vector<at::Tensor> dynamicQuantizeLinear(const at::Tensor& x)
{
    const at::Tensor values = at::where(at::isnan(x), at::zeros({}, x.options()), x);
    const float low = x.numel() ? std::min(0.0f, values.min().item<float>()) : 0.0f;
    const float high = x.numel() ? std::max(0.0f, values.max().item<float>()) : 0.0f;
    const float scale = high > low ? (high - low) / 255.0f : 1.0f;
    const float zeroPoint = std::isfinite(-low / scale) ? std::clamp(std::nearbyint(-low / scale), 0.0f, 255.0f) : 0.0f;
    return {at::nan_to_num(at::round(x / scale).add_(zeroPoint), 0.0, 255.0, 0.0).clamp_(0, 255).to(at::kByte),
            at::scalar_tensor(scale, at::kFloat), at::scalar_tensor(int64_t(zeroPoint), at::kByte)};
}

// (a - its zero point) times (b - its zero point), exact in double; a's zero point one value or one
// per row, b's one or one per column.
at::Tensor exactMatmul(const at::Tensor& a, const at::Tensor& aZeroPoint, const at::Tensor& b, const at::Tensor& bZeroPoint)
{
    at::Tensor x = a.to(at::kDouble), y = b.to(at::kDouble);
    if (aZeroPoint.defined())
        x = x - (aZeroPoint.numel() == 1 ? aZeroPoint.to(at::kDouble).reshape({}) : aZeroPoint.to(at::kDouble).unsqueeze(-1));
    if (bZeroPoint.defined())
        y = y - (bZeroPoint.numel() == 1 ? bZeroPoint.to(at::kDouble).reshape({}) : bZeroPoint.to(at::kDouble));
    return at::matmul(x, y);
}

// The convolution of x and the weights less their zero points (x's one value, the weights' one or
// one per output channel), exact in double; `pads` the explicit pads of an asymmetric window
// (at::constant_pad_nd's order), else empty.
at::Tensor exactConv(const at::Tensor& x, const at::Tensor& xZeroPoint, const at::Tensor& weight, const at::Tensor& wZeroPoint,
                     const Ints& stride, const Ints& padding, const Ints& pads, const Ints& dilation, int64_t groups)
{
    at::Tensor input = x.to(at::kDouble), w = weight.to(at::kDouble);
    if (xZeroPoint.defined())
        input = input - xZeroPoint.to(at::kDouble).reshape({});
    if (wZeroPoint.defined())
        w = w - alongAxis(wZeroPoint.to(at::kDouble), 0, w.dim());
    if (!pads.empty())
        input = at::constant_pad_nd(input, pads, 0.0);
    return at::convolution(input, w, {}, stride, padding, dilation, false, Ints(stride.size(), 0), groups);
}

// ONNX's MatMulInteger: exactMatmul as int32.
at::Tensor integerMatmul(const at::Tensor& a, const at::Tensor& aZeroPoint, const at::Tensor& b, const at::Tensor& bZeroPoint)
{
    return exactMatmul(a, aZeroPoint, b, bZeroPoint).to(at::kInt);
}

// ONNX's ConvInteger: exactConv as int32.
at::Tensor integerConv(const at::Tensor& x, const at::Tensor& xZeroPoint, const at::Tensor& weight,
                       const at::Tensor& wZeroPoint, const Ints& stride, const Ints& padding, const Ints& pads,
                       const Ints& dilation, int64_t groups)
{
    return exactConv(x, xZeroPoint, weight, wZeroPoint, stride, padding, pads, dilation, groups).to(at::kInt);
}

// An exact accumulator as the output's integers: round(acc * multiplier) (half to even) plus the
// zero point, saturated to its type (uint8 where there is none).
at::Tensor requantize(const at::Tensor& acc, const at::Tensor& multiplier, const at::Tensor& zeroPoint)
{
    const at::ScalarType type = zeroPoint.defined() ? zeroPoint.scalar_type() : at::kByte;
    at::Tensor y = at::round(acc * multiplier);
    if (zeroPoint.defined())
        y = y + zeroPoint.to(at::kDouble).reshape({});
    return type == at::kChar ? y.clamp_(-128, 127).to(type) : y.clamp_(0, 255).to(type);
}

// ONNX's QLinearConv in any form (the runtime's reference path): the integer convolution plus the
// int32 bias, exact in double, requantized by x_scale * w_scale / y_scale (w_scale one value or
// one per output channel).
at::Tensor qlinearConvExact(const at::Tensor& x, const at::Tensor& xScale, const at::Tensor& xZeroPoint, const at::Tensor& w,
                            const at::Tensor& wScale, const at::Tensor& wZeroPoint, const at::Tensor& yScale,
                            const at::Tensor& yZeroPoint, const at::Tensor& bias, const Ints& stride, const Ints& padding,
                            const Ints& pads, const Ints& dilation, int64_t groups)
{
    at::Tensor acc = exactConv(x, xZeroPoint, w, wZeroPoint, stride, padding, pads, dilation, groups);
    if (bias.defined())
        acc = acc + alongAxis(bias.to(at::kDouble), 1, acc.dim());
    const at::Tensor scales = wScale.to(at::kDouble).reshape({-1}).expand({w.size(0)});
    const at::Tensor multiplier =
        alongAxis(scales * xScale.to(at::kDouble).reshape({}) / yScale.to(at::kDouble).reshape({}), 1, acc.dim());
    return requantize(acc, multiplier, yZeroPoint);
}

// ONNX's QLinearMatMul in any form (the runtime's reference path): the integer product, exact in
// double, requantized by a_scale * b_scale / y_scale (b's scale and zero point one value or one
// per column).
at::Tensor qlinearMatmulExact(const at::Tensor& a, const at::Tensor& aScale, const at::Tensor& aZeroPoint, const at::Tensor& b,
                              const at::Tensor& bScale, const at::Tensor& bZeroPoint, const at::Tensor& yScale,
                              const at::Tensor& yZeroPoint)
{
    return requantize(exactMatmul(a, aZeroPoint, b, bZeroPoint),
                      bScale.to(at::kDouble) * aScale.to(at::kDouble).reshape({}) / yScale.to(at::kDouble).reshape({}),
                      yZeroPoint);
}

// The quantized engine the runtime takes: oneDNN's, else QNNPACK's; set once.
void useQuantizedEngine()
{
    static const bool ready = [] {
        const auto engines = at::globalContext().supportedQEngines();
        for (at::QEngine e : {at::QEngine::ONEDNN, at::QEngine::QNNPACK})
            if (std::find(engines.begin(), engines.end(), e) != engines.end()) {
                at::globalContext().setQEngine(e);
                return true;
            }
        return false;
    }();
    if (!ready)
        throw std::runtime_error("this libtorch has no quantized engine (oneDNN or QNNPACK) for the int8 operators");
}

// A libtorch operator, called with boxed arguments; its first result.
c10::IValue callOperator(const c10::OperatorHandle& op, std::vector<c10::IValue> args)
{
    torch::jit::Stack stack(std::move(args));
    op.callBoxed(&stack);
    return stack.at(0);
}

// The packed form of `weight`, made by `make` once per weight tensor.
const c10::IValue& packedWeights(const at::Tensor& weight, const std::function<c10::IValue()>& make)
{
    static std::mutex mutex;
    static std::map<const void*, c10::IValue> made;  // the program's weights live as long as it does
    useQuantizedEngine();
    std::lock_guard<std::mutex> lock(mutex);
    c10::IValue& packed = made[weight.unsafeGetTensorImpl()];
    if (packed.isNone())
        packed = make();
    return packed;
}

// int8 weights [M, ...] with one scale per row (or one for all) as a quantized tensor; `scales` gets them.
at::Tensor perChannel(const at::Tensor& weight, const at::Tensor& scale, at::Tensor& scales)
{
    const int64_t m = weight.size(0);
    scales = scale.to(at::kDouble).reshape({-1}).expand({m}).contiguous();
    return at::_make_per_channel_quantized_tensor(weight, scales, at::zeros({m}, at::kLong), 0);
}

// ONNX's QLinearConv of uint8 x and int8 weights of zero offset: quantized::conv2d, its int32 bias
// in float (bias * weight scale * x scale) packed with the weights.
at::Tensor qlinearConv(const at::Tensor& x, const at::Tensor& xScale, const at::Tensor& xZeroPoint, const at::Tensor& weight,
                       const at::Tensor& wScale, const at::Tensor& yScale, const at::Tensor& yZeroPoint,
                       const at::Tensor& bias, const Ints& stride, const Ints& padding, const Ints& dilation, int64_t groups)
{
    const c10::IValue& packed = packedWeights(weight, [&] {
        at::Tensor scales;
        const at::Tensor qw = perChannel(weight.contiguous(), wScale, scales);
        const c10::IValue b = bias.defined() ? c10::IValue((bias.to(at::kDouble) * scales * xScale.item<double>()).to(at::kFloat))
                                             : c10::IValue();
        return callOperator(c10::Dispatcher::singleton().findSchemaOrThrow("quantized::conv2d_prepack", ""),
                            {qw, b, c10::IValue(stride), c10::IValue(padding), c10::IValue(dilation), c10::IValue(groups)});
    });
    const at::Tensor qx = at::_make_per_tensor_quantized_tensor(x.contiguous(at::MemoryFormat::ChannelsLast),
                                                                xScale.item<double>(), xZeroPoint.item<int64_t>());
    static const c10::OperatorHandle conv = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::conv2d", "new");
    return callOperator(conv, {qx, packed, yScale.item<double>(), yZeroPoint.item<int64_t>()})
        .toTensor()
        .int_repr();
}

// ONNX's QLinearMatMul of uint8 a and int8 b [K, N] of zero offset: quantized::linear.
at::Tensor qlinearMatmul(const at::Tensor& a, const at::Tensor& aScale, const at::Tensor& aZeroPoint, const at::Tensor& b,
                         const at::Tensor& bScale, const at::Tensor& yScale, const at::Tensor& yZeroPoint)
{
    const c10::IValue& packed = packedWeights(b, [&] {
        at::Tensor scales;
        return callOperator(c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", ""),
                            {perChannel(b.t().contiguous(), bScale, scales), c10::IValue()});
    });
    const at::Tensor qa = at::_make_per_tensor_quantized_tensor(a.contiguous(), aScale.item<double>(), aZeroPoint.item<int64_t>());
    static const c10::OperatorHandle linear = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear", "");
    return callOperator(linear, {qa, packed, yScale.item<double>(), yZeroPoint.item<int64_t>()})
        .toTensor()
        .int_repr();
}

// Max pooling of uint8 values (the quantize pass keeps pooled values in int8): the quantized kernel.
at::Tensor maxPool2dUint8(const at::Tensor& x, const Ints& kernel, const Ints& stride, const Ints& padding,
                          const Ints& dilation, bool ceilMode)
{
    useQuantizedEngine();
    return at::max_pool2d(at::_make_per_tensor_quantized_tensor(x, 1.0, 0), kernel, stride, padding, dilation, ceilMode)
        .int_repr();
}
