// Quantized operators: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger. Quantized values travel
// as plain uint8/int8 tensors, as ONNX defines them. QLinearConv and QLinearMatMul
// with constant int8 weights of zero offset and uint8 activations run libtorch's
// quantized kernels (oneDNN engine, else QNNPACK) on prepacked weights; everything
// else takes an exact reference path in double precision.
#include "core/runtime/torch/kernel.h"

#include "core/ir/window.h"
#include "core/util/error.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <algorithm>
#include <cmath>

namespace ramiel {

namespace {

// A scale or zero point shaped to broadcast along `axis` of a rank-r tensor.
at::Tensor alongAxis(const at::Tensor& t, int64_t axis, int64_t rank)
{
    if (t.dim() == 0 || t.numel() == 1)
        return t.reshape({});
    std::vector<int64_t> shape(size_t(rank), 1);
    shape[size_t(axis)] = t.numel();
    return t.reshape(shape);
}

std::pair<double, double> rangeOf(at::ScalarType t)
{
    switch (t) {
    case at::kByte: return {0, 255};
    case at::kChar: return {-128, 127};
    case at::kInt: return {-2147483648.0, 2147483647.0};
    default: return {0, 255};
    }
}

at::Tensor quantizeLinear(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& zp, int64_t axis,
                          at::ScalarType type)
{
    const auto [lo, hi] = rangeOf(type);
    const int64_t a = normalizeAxis(axis, std::max<int64_t>(x.dim(), 1));
    at::Tensor y = at::div(x.to(at::kFloat), alongAxis(scale.to(at::kFloat), a, x.dim()));
    y.round_();
    if (zp.defined())
        y.add_(alongAxis(zp.to(at::kFloat), a, x.dim()));
    return y.clamp_(lo, hi).to(type);
}

at::Tensor dequantizeLinear(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& zp, int64_t axis)
{
    const int64_t a = normalizeAxis(axis, std::max<int64_t>(x.dim(), 1));
    at::Tensor y = x.to(at::kFloat);
    if (zp.defined())
        y = y - alongAxis(zp.to(at::kFloat), a, x.dim());
    return y * alongAxis(scale.to(at::kFloat), a, x.dim());
}

// Requantizes an exact integer accumulator: round(acc * multiplier) + zero point, saturated.
at::Tensor requantize(const at::Tensor& acc, const at::Tensor& multiplier, const at::Tensor& yZp, at::ScalarType type)
{
    const auto [lo, hi] = rangeOf(type);
    at::Tensor y = at::round(acc * multiplier);
    if (yZp.defined())
        y = y + yZp.to(at::kDouble).reshape({});
    return y.clamp_(lo, hi).to(type);
}

// The convolution of integer x and w less their zero points (x's one value, w's
// one value or one per output channel; undefined: 0) under the node's window
// attributes, exact in double precision (sums below 2^53).
at::Tensor exactConvolution(const Node& n, const std::vector<int64_t>& kernelAttr, int64_t groups, const at::Tensor& xq,
                            const at::Tensor& xZp, const at::Tensor& wq, const at::Tensor& wZp)
{
    at::Tensor x = xq.to(at::kDouble);
    if (xZp.defined())
        x = x - xZp.to(at::kDouble).reshape({});
    at::Tensor w = wq.to(at::kDouble);
    if (wZp.defined())
        w = w - alongAxis(wZp.to(at::kDouble), 0, w.dim());
    const Window win = windowOf(n, kernelAttr.empty() ? kernelFromWeight(w) : kernelAttr, spatialSizes(x));
    at::Tensor xp = x;
    std::vector<int64_t> pad = win.padBegin;
    if (!win.symmetric()) {
        xp = at::constant_pad_nd(x, win.atenPads(), 0.0);
        pad.assign(pad.size(), 0);
    }
    return at::convolution(xp, w, at::Tensor(), win.strides, pad, win.dilations, false,
                           std::vector<int64_t>(pad.size(), 0), groups);
}

// The product of integer a and b less their zero points (a's one value or one per
// row, b's one value or one per column; undefined: 0), exact in double precision.
at::Tensor exactProduct(const at::Tensor& aq, const at::Tensor& aZp, const at::Tensor& bq, const at::Tensor& bZp)
{
    at::Tensor a = aq.to(at::kDouble);
    if (aZp.defined())
        a = a - (aZp.numel() == 1 ? aZp.to(at::kDouble).reshape({}) : aZp.to(at::kDouble).unsqueeze(-1));
    at::Tensor b = bq.to(at::kDouble);
    if (bZp.defined())
        b = b - (bZp.numel() == 1 ? bZp.to(at::kDouble).reshape({}) : bZp.to(at::kDouble));
    return at::matmul(a, b);
}

// DynamicQuantizeLinear: a float tensor to uint8 over the range of its values and 0,
// as ONNX's reference computes it in float: scale (max - min) / 255, zero point
// round(-min / scale), each value round(x / scale) + zero point, saturated; rounding
// to even. Where ONNX's reference divides by zero or reads NaN, ONNX Runtime's
// choices: NaN values left out of the range and quantized to 0, a scale of 1 where
// every value is 0.
void dynamicQuantizeLinear(const at::Tensor& x, std::vector<at::Tensor>& out)
{
    if (x.scalar_type() != at::kFloat)
        throw Error(ErrorKind::Unsupported, {}, "DynamicQuantizeLinear of " + std::string(c10::toString(x.scalar_type())) +
                                                    " tensors is not supported (float is)");
    const at::Tensor values = at::where(at::isnan(x), at::zeros({}, x.options()), x);  // 0 is in the range anyway
    const float lo = x.numel() ? std::min(0.0f, values.min().item<float>()) : 0.0f;
    const float hi = x.numel() ? std::max(0.0f, values.max().item<float>()) : 0.0f;
    const float scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    const float zp = std::isfinite(-lo / scale) ? std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f) : 0.0f;
    out[0] = at::nan_to_num(at::round(x / scale).add_(zp), 0.0, 255.0, 0.0).clamp_(0, 255).to(at::kByte);
    out[1] = at::scalar_tensor(scale, at::kFloat);
    out[2] = at::scalar_tensor(int64_t(zp), at::TensorOptions().dtype(at::kByte));
}

bool quantizedEngineReady()
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
    return ready;
}

c10::IValue callOp(const char* name, const char* overload, std::vector<c10::IValue> args)
{
    const auto op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
    torch::jit::Stack stack(std::move(args));
    op.callBoxed(&stack);
    return stack.at(0);
}

bool isScalarConstant(const KernelContext& c, size_t i) { return c.isConstant(i) && c.constants[i].numel() == 1; }

// True when input i is a constant of all zeros (or omitted).
bool zeroOrOmitted(const KernelContext& c, size_t i)
{
    if (!c.hasInput(i))
        return true;
    return c.isConstant(i) && c.constants[i].eq(0).all().item<bool>();
}

Kernel qlinearConvKernel(const KernelContext& c)
{
    const Node n = c.node;
    const int64_t groups = n.attrInt("group", 1);
    const auto kernelAttr = n.attrInts("kernel_shape");
    // Fast path: libtorch's quantized convolution on prepacked weights.
    const bool constantParams = isScalarConstant(c, 1) && isScalarConstant(c, 2) && c.isConstant(3) &&
                                c.isConstant(4) && isScalarConstant(c, 6) && isScalarConstant(c, 7) &&
                                (!c.hasInput(8) || c.isConstant(8));
    if (constantParams && c.inputRank(0) == 4 && c.constants[2].scalar_type() == at::kByte &&
        c.constants[7].scalar_type() == at::kByte && c.constants[3].scalar_type() == at::kChar &&
        zeroOrOmitted(c, 5) && quantizedEngineReady()) {
        const auto& shape = c.graph.value(n.input(0)).type.shape;
        const at::Tensor w = c.constants[3].contiguous();
        const int64_t m = w.size(0);
        std::vector<int64_t> spatial(2, 0);
        if (shape && shape->isFullyKnown()) {
            const std::vector<int64_t> sizes = *shape->sizes();
            spatial.assign(sizes.begin() + 2, sizes.end());
        }
        const Window win = windowOf(n, kernelAttr.empty() ? kernelFromWeight(w) : kernelAttr, spatial);
        const std::string autoPad = n.attrString("auto_pad", "NOTSET");
        if (win.symmetric() && (autoPad == "NOTSET" || autoPad == "VALID" || (shape && shape->isFullyKnown()))) {
            const double xScale = c.constants[1].item<double>(), yScale = c.constants[6].item<double>();
            const int64_t xZp = c.constants[2].item<int64_t>(), yZp = c.constants[7].item<int64_t>();
            const at::Tensor wScale = c.constants[4].to(at::kDouble).reshape({-1}).expand({m}).contiguous();
            const at::Tensor qw = at::_make_per_channel_quantized_tensor(
                w, wScale, at::zeros({m}, at::TensorOptions().dtype(at::kLong)), 0);
            at::Tensor bias;
            if (c.hasInput(8))
                bias = (c.constants[8].to(at::kDouble) * wScale * xScale).to(at::kFloat);
            const c10::IValue packed =
                callOp("quantized::conv2d_prepack", "",
                       {qw, bias.defined() ? c10::IValue(bias) : c10::IValue(), c10::IValue(win.strides),
                        c10::IValue(win.padBegin), c10::IValue(win.dilations), c10::IValue(groups)});
            const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::conv2d", "new");
            return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                const at::Tensor qx = at::_make_per_tensor_quantized_tensor(
                    in[0].contiguous(at::MemoryFormat::ChannelsLast), xScale, xZp);
                torch::jit::Stack stack{qx, packed, yScale, yZp};
                op.callBoxed(&stack);
                out[0] = stack.at(0).toTensor().int_repr();
            };
        }
    }
    // Reference path: integer arithmetic carried exactly in double precision.
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const int64_t m = in[3].size(0);
        at::Tensor acc = exactConvolution(n, kernelAttr, groups, in[0], in[2], in[3], in.size() > 5 ? in[5] : at::Tensor());
        if (in.size() > 8 && in[8].defined())
            acc = acc + alongAxis(in[8].to(at::kDouble), 1, acc.dim());
        const at::Tensor wScale = in[4].to(at::kDouble).reshape({-1}).expand({m});
        const at::Tensor multiplier = alongAxis(wScale * in[1].to(at::kDouble).reshape({}) / in[6].to(at::kDouble).reshape({}), 1, acc.dim());
        out[0] = requantize(acc, multiplier, in[7], in[7].defined() ? in[7].scalar_type() : at::kByte);
    };
}

Kernel qlinearMatMulKernel(const KernelContext& c)
{
    // Inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
    const bool fast = isScalarConstant(c, 1) && isScalarConstant(c, 2) && c.isConstant(3) && c.isConstant(4) &&
                      isScalarConstant(c, 6) && isScalarConstant(c, 7) && c.constants[3].dim() == 2 &&
                      c.constants[2].scalar_type() == at::kByte && c.constants[7].scalar_type() == at::kByte &&
                      c.constants[3].scalar_type() == at::kChar && zeroOrOmitted(c, 5) && quantizedEngineReady();
    if (fast) {
        const double aScale = c.constants[1].item<double>(), yScale = c.constants[6].item<double>();
        const int64_t aZp = c.constants[2].item<int64_t>(), yZp = c.constants[7].item<int64_t>();
        const at::Tensor w = c.constants[3].t().contiguous();  // [N, K], as quantized::linear takes it
        const int64_t nOut = w.size(0);
        const at::Tensor wScale = c.constants[4].to(at::kDouble).reshape({-1}).expand({nOut}).contiguous();
        const at::Tensor qw = at::_make_per_channel_quantized_tensor(
            w, wScale, at::zeros({nOut}, at::TensorOptions().dtype(at::kLong)), 0);
        const c10::IValue packed = callOp("quantized::linear_prepack", "", {qw, c10::IValue()});
        const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear", "");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor qa = at::_make_per_tensor_quantized_tensor(in[0].contiguous(), aScale, aZp);
            torch::jit::Stack stack{qa, packed, yScale, yZp};
            op.callBoxed(&stack);
            out[0] = stack.at(0).toTensor().int_repr();
        };
    }
    return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        // b's zero point and scale are per tensor or per column (its last dimension).
        const at::Tensor acc = exactProduct(in[0], in[2], in[3], in[5]);
        const at::Tensor multiplier = in[4].to(at::kDouble) * in[1].to(at::kDouble).reshape({}) / in[6].to(at::kDouble).reshape({});
        out[0] = requantize(acc, multiplier, in[7], in[7].scalar_type());
    };
}

}  // namespace

void registerQuantizedKernels(KernelRegistry& r)
{
    r["QLinearConv"] = qlinearConvKernel;
    r["QLinearMatMul"] = qlinearMatMulKernel;
    r["ConvInteger"] = [](const KernelContext& c) -> Kernel {
        const Node n = c.node;
        const int64_t groups = n.attrInt("group", 1);
        const auto kernelAttr = n.attrInts("kernel_shape");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            auto optional = [&](size_t i) { return i < in.size() ? in[i] : at::Tensor(); };
            out[0] = exactConvolution(n, kernelAttr, groups, in[0], optional(2), in[1], optional(3)).to(at::kInt);
        };
    };
    r["MatMulInteger"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            auto optional = [&](size_t i) { return i < in.size() ? in[i] : at::Tensor(); };
            out[0] = exactProduct(in[0], optional(2), in[1], optional(3)).to(at::kInt);
        };
    };
    r["DynamicQuantizeLinear"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { dynamicQuantizeLinear(in[0], out); };
    };
    r["QuantizeLinear"] = [](const KernelContext& c) -> Kernel {
        const int64_t axis = c.node.attrInt("axis", 1);
        // The output type is the zero point's (uint8 when it is omitted).
        return [axis](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor zp = in.size() > 2 ? in[2] : at::Tensor();
            out[0] = quantizeLinear(in[0], in[1], zp, in[1].numel() > 1 ? axis : 0,
                                    zp.defined() ? zp.scalar_type() : at::kByte);
        };
    };
    r["DequantizeLinear"] = [](const KernelContext& c) -> Kernel {
        const int64_t axis = c.node.attrInt("axis", 1);
        return [axis](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = dequantizeLinear(in[0], in[1], in.size() > 2 ? in[2] : at::Tensor(), in[1].numel() > 1 ? axis : 0);
        };
    };
}

}  // namespace ramiel
