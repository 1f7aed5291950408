# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
import torch.nn.functional as F
# </check-only>
# Int8 operators in the form Ramiel's quantize pass writes them, run as its runtime runs them:
# PyTorch's quantized kernels (oneDNN's engine, else QNNPACK's) on weights packed once. Quantized
# values travel between them as plain uint8 and int8 tensors, as ONNX defines them.
QUANTIZED_ENGINE = next((e for e in ('onednn', 'qnnpack') if e in torch.backends.quantized.supported_engines), None)
if QUANTIZED_ENGINE is not None:
    torch.backends.quantized.engine = QUANTIZED_ENGINE
_packed_weights = {}  # id(weight) -> (weight, its packed form)


def _along(t, axis, rank):
    """A scale or zero point shaped to broadcast along `axis` of a rank-`rank` tensor."""
    if t.numel() == 1:
        return t.reshape(())
    shape = [1] * rank
    shape[axis] = -1
    return t.reshape(shape)


def quantize_linear(x, scale, zero_point, axis, dtype, low, high):
    """ONNX's QuantizeLinear: round(x / scale) + zero point (half to even), saturated to [low, high]."""
    y = torch.round(x.float() / _along(scale.float(), axis, x.dim()))
    if zero_point is not None:
        y += _along(zero_point.float(), axis, x.dim())
    return y.clamp_(low, high).to(dtype)


def dequantize_linear(x, scale, zero_point, axis):
    """ONNX's DequantizeLinear: (x - zero point) * scale, in float."""
    y = x.float()
    if zero_point is not None:
        y = y - _along(zero_point.float(), axis, x.dim())
    return y * _along(scale.float(), axis, x.dim())


def dynamic_quantize_linear(x):
    """ONNX's DynamicQuantizeLinear: x to uint8 over the range of its values and 0 (NaN left out and
    quantized to 0), with that scale and zero point, computed in float as the runtime computes them."""
    values = torch.where(torch.isnan(x), torch.zeros((), dtype=x.dtype), x)
    low = torch.clamp(values.min(), max=0) if x.numel() else torch.zeros((), dtype=x.dtype)
    high = torch.clamp(values.max(), min=0) if x.numel() else torch.zeros((), dtype=x.dtype)
    scale = (high - low) / 255 if high > low else torch.ones((), dtype=x.dtype)
    zero_point = -low / scale
    zero_point = torch.round(zero_point).clamp(0, 255) if torch.isfinite(zero_point) else torch.zeros((), dtype=x.dtype)
    y = torch.nan_to_num(torch.round(x / scale) + zero_point, 0.0, 255.0, 0.0).clamp_(0, 255).to(torch.uint8)
    return y, scale, zero_point.to(torch.uint8)


def exact_matmul(a, a_zero_point, b, b_zero_point):
    """(a - its zero point) times (b - its zero point), exact in double; a's zero point one value or
    one per row, b's one or one per column."""
    a = a.double()
    if a_zero_point is not None:
        a = a - (a_zero_point.double().reshape(()) if a_zero_point.numel() == 1 else a_zero_point.double().unsqueeze(-1))
    b = b.double()
    if b_zero_point is not None:
        b = b - (b_zero_point.double().reshape(()) if b_zero_point.numel() == 1 else b_zero_point.double())
    return torch.matmul(a, b)


def exact_conv(x, x_zero_point, weight, w_zero_point, stride, padding, pads, dilation, groups):
    """The convolution of x and the weights less their zero points (x's one value, the weights' one
    or one per output channel), exact in double; `pads` the explicit pads of an asymmetric window
    (F.pad's order), else None."""
    x = x.double()
    if x_zero_point is not None:
        x = x - x_zero_point.double().reshape(())
    w = weight.double()
    if w_zero_point is not None:
        w = w - _along(w_zero_point.double(), 0, w.dim())
    if pads is not None:
        x = F.pad(x, pads)
    return torch.convolution(x, w, None, stride, padding, dilation, False, [0] * len(stride), groups)


def integer_matmul(a, a_zero_point, b, b_zero_point):
    """ONNX's MatMulInteger: exact_matmul as int32."""
    return exact_matmul(a, a_zero_point, b, b_zero_point).int()


def integer_conv(x, x_zero_point, weight, w_zero_point, stride, padding, pads, dilation, groups):
    """ONNX's ConvInteger: exact_conv as int32."""
    return exact_conv(x, x_zero_point, weight, w_zero_point, stride, padding, pads, dilation, groups).int()


def requantize(acc, multiplier, zero_point):
    """An exact accumulator as the output's integers: round(acc * multiplier) (half to even) plus
    the zero point, saturated to its type (uint8 where there is none)."""
    dtype = zero_point.dtype if zero_point is not None else torch.uint8
    y = torch.round(acc * multiplier)
    if zero_point is not None:
        y = y + zero_point.double().reshape(())
    return y.clamp_(torch.iinfo(dtype).min, torch.iinfo(dtype).max).to(dtype)


def qlinear_conv_exact(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, bias, stride,
                       padding, pads, dilation, groups):
    """ONNX's QLinearConv in any form (the runtime's reference path): the integer convolution plus
    the int32 bias, exact in double, requantized by x_scale * w_scale / y_scale (w_scale one value
    or one per output channel)."""
    acc = exact_conv(x, x_zero_point, w, w_zero_point, stride, padding, pads, dilation, groups)
    if bias is not None:
        acc = acc + _along(bias.double(), 1, acc.dim())
    w_scale = w_scale.double().reshape(-1).expand(w.shape[0])
    multiplier = _along(w_scale * x_scale.double().reshape(()) / y_scale.double().reshape(()), 1, acc.dim())
    return requantize(acc, multiplier, y_zero_point)


def qlinear_matmul_exact(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    """ONNX's QLinearMatMul in any form (the runtime's reference path): the integer product, exact in
    double, requantized by a_scale * b_scale / y_scale (b's scale and zero point one value or one
    per column)."""
    acc = exact_matmul(a, a_zero_point, b, b_zero_point)
    return requantize(acc, b_scale.double() * a_scale.double().reshape(()) / y_scale.double().reshape(()), y_zero_point)


def _packed(weight, make):
    if QUANTIZED_ENGINE is None:
        raise RuntimeError('this PyTorch has no quantized engine (oneDNN or QNNPACK) for the int8 operators')
    entry = _packed_weights.get(id(weight))
    if entry is None or entry[0] is not weight:
        entry = _packed_weights[id(weight)] = (weight, make())
    return entry[1]


def _per_channel(weight, scale):
    """int8 weights [M, ...] with one scale per row (or one for all) as a quantized tensor."""
    m = weight.shape[0]
    scales = scale.double().reshape(-1).expand(m).contiguous()
    return torch._make_per_channel_quantized_tensor(weight, scales, torch.zeros(m, dtype=torch.long), 0), scales


def qlinear_conv(x, x_scale, x_zero_point, weight, w_scale, y_scale, y_zero_point, bias, stride, padding, dilation,
                 groups):
    """ONNX's QLinearConv of uint8 x and int8 weights of zero offset: quantized::conv2d, its int32 bias
    in float (bias * weight scale * x scale) packed with the weights."""
    def make():
        qw, scales = _per_channel(weight, w_scale)
        b = None if bias is None else (bias.double() * scales * float(x_scale)).float()
        return torch.ops.quantized.conv2d_prepack(qw, b, stride, padding, dilation, groups)
    packed = _packed(weight, make)
    qx = torch._make_per_tensor_quantized_tensor(x.contiguous(memory_format=torch.channels_last), float(x_scale),
                                                 int(x_zero_point))
    return torch.ops.quantized.conv2d(qx, packed, float(y_scale), int(y_zero_point)).int_repr()


def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, y_scale, y_zero_point):
    """ONNX's QLinearMatMul of uint8 a and int8 b [K, N] of zero offset: quantized::linear."""
    packed = _packed(b, lambda: torch.ops.quantized.linear_prepack(_per_channel(b.t().contiguous(), b_scale)[0], None))
    qa = torch._make_per_tensor_quantized_tensor(a.contiguous(), float(a_scale), int(a_zero_point))
    return torch.ops.quantized.linear(qa, packed, float(y_scale), int(y_zero_point)).int_repr()


def max_pool2d_uint8(x, kernel_size, stride, padding=0, dilation=1, ceil_mode=False):
    """Max pooling of uint8 values (the quantize pass keeps pooled values in int8): the quantized kernel."""
    q = torch._make_per_tensor_quantized_tensor(x, 1.0, 0)
    return F.max_pool2d(q, kernel_size, stride, padding, dilation, ceil_mode).int_repr()
