// Elementwise operators: arithmetic with NumPy broadcasting, comparisons,
// logic, activations, Cast, Clip, Where.
#include "core/ir/cast_target.h"
#include "core/ir/fused_ops.h"
#include "core/runtime/torch/arithmetic_loops.h"
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/channels_last.h"
#include "core/runtime/torch/fresh_tensor.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/vector_math.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

namespace ramiel {

namespace {

// HardSigmoid of a small dense float tensor (at most ATen's grain, which ATen runs on
// one thread too), in its own layout and without ATen's dispatcher: in MobileNetV3 it
// runs on squeeze-excite's [1, C, 1, 1], where at::hardsigmoid took 3.5-15 us, most
// of it the dispatch, cold inside a model. PyTorch's (alpha 1/6, beta 1/2) in
// PyTorch's own arithmetic; NaN stays NaN. Undefined where it does not apply.
at::Tensor smallHardSigmoid(const at::Tensor& x, float alpha, float beta, bool pytorchs)
{
    if (x.scalar_type() != at::kFloat || x.numel() > at::internal::GRAIN_SIZE || !x.is_non_overlapping_and_dense())
        return {};
    at::Tensor y = emptyFloatLike(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    if (pytorchs)
        for (int64_t i = 0; i < n; ++i)
            out[i] = std::min(std::max(in[i] + 3.0f, 0.0f), 6.0f) / 6.0f;
    else
        for (int64_t i = 0; i < n; ++i)
            out[i] = std::max(std::min(in[i] * alpha + beta, 1.0f), 0.0f);
    return y;
}

using Unary = at::Tensor (*)(const at::Tensor&);

// ATen's GELU; a channels-last activation (a convolution's, MaxViT's) as the
// contiguous NHWC tensor it is in memory: ATen 1.13 takes a path 4-5x slower for
// channels-last (2.67 against 0.56 ms on 256 x 56 x 56, one thread).
at::Tensor geluInMemoryOrder(const at::Tensor& x, const std::string& approximate)
{
    if (x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast))
        return at::gelu(x.permute({0, 2, 3, 1}), approximate).permute({0, 3, 1, 2});
    return at::gelu(x, approximate);
}

KernelFactory unary(Unary f)
{
    return [f](const KernelContext&) -> Kernel {
        return [f](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = f(in[0]); };
    };
}

template <typename F>
KernelFactory binary(F f)
{
    return [f](const KernelContext&) -> Kernel {
        return [f](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = f(in[0], in[1]); };
    };
}

// a op b: float operands through arithmetic_loops.h where it applies, otherwise ATen's
// (broadcasting, type promotion).
at::Tensor arithmetic(Arithmetic op, const at::Tensor& a, const at::Tensor& b)
{
    if (at::Tensor y = arithmeticFloat(op, a, b); y.defined())
        return y;
    switch (op) {
    case Arithmetic::Add: return at::add(a, b);
    case Arithmetic::Sub: return at::sub(a, b);
    case Arithmetic::Mul: return at::mul(a, b);
    case Arithmetic::Div: break;
    }
    return at::div(a, b);
}

bool isIntegral(const at::Tensor& t) { return at::isIntegralType(t.scalar_type(), /*includeBool=*/true); }

// An integer Div's or Mod's divisor, made safe: a zero is refused in one line, and a
// signed -1 becomes 1, since the lowest value divided by -1 overflows and x86's division
// traps on it (SIGFPE). A remainder by -1 is 0, as by 1; Div negates there itself.
at::Tensor safeIntegerDivisor(const at::Tensor& b, const char* op)
{
    if (at::any(b == 0).item<bool>())
        throw Error(ErrorKind::Runtime, {}, std::string(op) + " of integers by zero");
    return at::isSignedType(b.scalar_type()) ? b.masked_fill(b == -1, 1) : b;
}

// Integer division truncates toward zero, as in C; by -1 it negates (wrapping, as
// two's complement does, where ONNX Runtime's division traps).
at::Tensor divideIntegers(const at::Tensor& a, const at::Tensor& b)
{
    const at::Tensor q = at::div(a, safeIntegerDivisor(b, "Div"), "trunc");
    return at::isSignedType(b.scalar_type()) ? at::where(b == -1, a.neg(), q) : q;
}

// Folds a variadic operator (Sum, Max, ...) over its inputs.
template <typename F>
KernelFactory variadic(F f, bool mean = false)
{
    return [f, mean](const KernelContext&) -> Kernel {
        return [f, mean](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            at::Tensor acc = in[0];
            for (size_t i = 1; i < in.size(); ++i)
                acc = f(acc, in[i]);
            out[0] = mean ? acc / double(in.size()) : (in.size() == 1 ? acc.clone() : acc);
        };
    };
}

// Binary arithmetic with broadcasting, and the variadic Sum, Mean, Max, Min.
void registerArithmeticKernels(KernelRegistry& r)
{
    r["Add"] = binary([](const at::Tensor& a, const at::Tensor& b) { return arithmetic(Arithmetic::Add, a, b); });
    r["Sub"] = binary([](const at::Tensor& a, const at::Tensor& b) { return arithmetic(Arithmetic::Sub, a, b); });
    r["Mul"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            // A channels-last activation times one value per channel (squeeze-excite's
            // scale), in place where the activation is handed over (its last reader).
            for (int k : {0, 1}) {
                const at::Tensor& x = in[size_t(k)];
                if (channelScaleChannelsLastApplies(x, in[size_t(1 - k)])) {
                    out[0] = channelScaleChannelsLast(x, in[size_t(1 - k)], heldOnlyHere(x));
                    return;
                }
            }
            out[0] = arithmetic(Arithmetic::Mul, in[0], in[1]);
        };
    };
    r["Div"] = binary([](const at::Tensor& a, const at::Tensor& b) {
        return isIntegral(a) && isIntegral(b) ? divideIntegers(a, b) : arithmetic(Arithmetic::Div, a, b);
    });
    r["Pow"] = [](const KernelContext& c) -> Kernel {
        // A constant one-element exponent (LayerNorm's x^2, written out) goes to
        // ATen's scalar overload, which squares, roots and multiplies; with a
        // tensor it computes pow per element (14x slower for x^2 here).
        if (c.isConstant(1) && c.constants[1].numel() == 1) {
            const at::Scalar e = c.constants[1].item();
            const int64_t rank = c.constants[1].dim();
            return [e, rank](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                const at::Tensor& a = in[0];
                out[0] = (a.dim() >= rank ? at::pow(a, e) : at::pow(a, in[1])).to(a.scalar_type());
            };
        }
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::pow(in[0], in[1]).to(in[0].scalar_type());  // the result has the base's type
        };
    };
    r["Mod"] = [](const KernelContext& c) -> Kernel {
        const bool fmod = c.node.attrInt("fmod", 0) != 0;
        return [fmod](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            if (!fmod && at::isFloatingType(in[0].scalar_type()))
                throw Error(ErrorKind::Runtime, {}, "Mod with fmod 0 on floating-point inputs (ONNX requires fmod 1)");
            const at::Tensor b = isIntegral(in[1]) ? safeIntegerDivisor(in[1], "Mod") : in[1];
            out[0] = fmod ? at::fmod(in[0], b) : at::remainder(in[0], b);
        };
    };

    r["Sum"] = variadic([](const at::Tensor& a, const at::Tensor& b) { return arithmetic(Arithmetic::Add, a, b); });
    r["Mean"] = variadic([](const at::Tensor& a, const at::Tensor& b) { return arithmetic(Arithmetic::Add, a, b); }, true);
    r["Max"] = variadic([](const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); });
    r["Min"] = variadic([](const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); });
}

// Comparisons and logic.
void registerComparisonKernels(KernelRegistry& r)
{
    r["Equal"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); });
    r["Less"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); });
    r["LessOrEqual"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); });
    r["Greater"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); });
    r["GreaterOrEqual"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); });
    r["And"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); });
    r["Or"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); });
    r["Xor"] = binary([](const at::Tensor& a, const at::Tensor& b) { return at::logical_xor(a, b); });
    r["Not"] = unary([](const at::Tensor& a) { return at::logical_not(a); });
}

// Unary math functions.
void registerUnaryMathKernels(KernelRegistry& r)
{
    r["Sqrt"] = unary([](const at::Tensor& a) { return at::sqrt(a); });
    r["Exp"] = unary([](const at::Tensor& a) { return at::exp(a); });
    r["Log"] = unary([](const at::Tensor& a) { return at::log(a); });
    r["Erf"] = unary([](const at::Tensor& a) { return a.scalar_type() == at::kFloat ? erfFloat(a) : at::erf(a); });
    r["Neg"] = unary([](const at::Tensor& a) { return at::neg(a); });
    r["Abs"] = unary([](const at::Tensor& a) { return at::abs(a); });
    r["Floor"] = unary([](const at::Tensor& a) { return at::floor(a); });
    r["Ceil"] = unary([](const at::Tensor& a) { return at::ceil(a); });
    r["Round"] = unary([](const at::Tensor& a) { return at::round(a); });  // half to even, as ONNX
    r["Reciprocal"] = unary([](const at::Tensor& a) { return at::reciprocal(a); });
    r["Sign"] = unary([](const at::Tensor& a) { return at::sign(a); });
    r["Sin"] = unary([](const at::Tensor& a) { return at::sin(a); });
    r["Cos"] = unary([](const at::Tensor& a) { return at::cos(a); });
    r["Tan"] = unary([](const at::Tensor& a) { return at::tan(a); });
    r["Asin"] = unary([](const at::Tensor& a) { return at::asin(a); });
    r["Acos"] = unary([](const at::Tensor& a) { return at::acos(a); });
    r["Atan"] = unary([](const at::Tensor& a) { return at::atan(a); });
    r["Sinh"] = unary([](const at::Tensor& a) { return at::sinh(a); });
    r["Cosh"] = unary([](const at::Tensor& a) { return at::cosh(a); });
    r["Asinh"] = unary([](const at::Tensor& a) { return at::asinh(a); });
    r["Acosh"] = unary([](const at::Tensor& a) { return at::acosh(a); });
    r["Atanh"] = unary([](const at::Tensor& a) { return at::atanh(a); });
    r["IsNaN"] = unary([](const at::Tensor& a) { return at::isnan(a); });
    r["IsInf"] = [](const KernelContext& c) -> Kernel {
        const bool negative = c.node.attrInt("detect_negative", 1) != 0, positive = c.node.attrInt("detect_positive", 1) != 0;
        return [negative, positive](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            if (negative && positive)
                out[0] = at::isinf(in[0]);
            else if (negative)
                out[0] = at::isneginf(in[0]);
            else if (positive)
                out[0] = at::isposinf(in[0]);
            else
                out[0] = at::zeros(in[0].sizes(), at::kBool);
        };
    };
    r["BitShift"] = [](const KernelContext& c) -> Kernel {
        const std::string direction = c.node.attrString("direction", "");
        if (direction != "LEFT" && direction != "RIGHT")
            c.unsupported("direction '" + direction + "' is not LEFT or RIGHT");
        const bool left = direction == "LEFT";
        return [left](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = left ? at::bitwise_left_shift(in[0], in[1]) : at::bitwise_right_shift(in[0], in[1]);
        };
    };
}

// Activation functions.
void registerActivationKernels(KernelRegistry& r)
{
    r["Relu"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = heldOnlyHere(in[0]) && reluInPlaceApplies(in[0]) ? reluInPlace(in[0]) : at::relu(in[0]);
        };
    };
    r["Sigmoid"] = unary([](const at::Tensor& a) { return at::sigmoid(a); });
    r["Tanh"] = unary([](const at::Tensor& a) { return at::tanh(a); });
    r["Softplus"] = unary([](const at::Tensor& a) { return at::log1p(at::exp(a)); });
    r["Softsign"] = unary([](const at::Tensor& a) { return a / (at::abs(a) + 1); });

    r["LeakyRelu"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 0.01f);
        return [alpha](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::leaky_relu(in[0], alpha);
        };
    };
    r["Elu"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 1.0f);
        return [alpha](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = at::elu(in[0], alpha); };
    };
    r["Selu"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 1.67326319217681884765625f);
        const double gamma = c.node.attrFloat("gamma", 1.05070102214813232421875f);
        return [alpha, gamma](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::where(in[0] > 0, in[0] * gamma, (at::exp(in[0]) - 1) * (alpha * gamma));
        };
    };
    r["PRelu"] = binary([](const at::Tensor& x, const at::Tensor& slope) { return at::where(x >= 0, x, x * slope); });
    r["HardSigmoid"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 0.2f), beta = c.node.attrFloat("beta", 0.5f);
        // PyTorch's (alpha 1/6, beta 1/2, as MobileNetV3 exports it): ATen's one pass, not three.
        const bool pytorchs = std::abs(alpha - 1.0 / 6.0) < 1e-6 && beta == 0.5;
        return [alpha, beta, pytorchs](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = smallHardSigmoid(in[0], float(alpha), float(beta), pytorchs);
            if (!out[0].defined())
                out[0] = pytorchs && in[0].is_floating_point() ? at::hardsigmoid(in[0])
                                                               : at::clamp(in[0] * alpha + beta, 0, 1);
        };
    };
    r["HardSwish"] = unary([](const at::Tensor& a) { return at::hardswish(a); });
    r["Mish"] = unary([](const at::Tensor& a) { return a * at::tanh(at::softplus(a)); });
    r["Gelu"] = [](const KernelContext& c) -> Kernel {
        const std::string approximate = c.node.attrString("approximate", "none");
        if (approximate != "none" && approximate != "tanh")
            c.unsupported("approximate '" + approximate + "' is not none or tanh");
        return [approximate](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = geluInMemoryOrder(in[0], approximate);
        };
    };
    r[std::string(kRamielDomain) + ":" + kGelu] = [](const KernelContext&) -> Kernel {  // fuse-gelu's node
        // ATen's GELU is vectorized with an erf of its own (a GELU on libmvec's erff
        // measured no faster on convnext_tiny).
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = geluInMemoryOrder(in[0], "none"); };
    };
    r[std::string(kRamielDomain) + ":" + kHardSwish] = unary([](const at::Tensor& a) { return at::hardswish(a); });
    r[std::string(kRamielDomain) + ":" + kSilu] = [](const KernelContext&) -> Kernel {  // fuse-silu's node
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = in[0].scalar_type() == at::kFloat ? siluFloat(in[0]) : at::silu(in[0]);
        };
    };
    r["Celu"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 1.0f);
        return [alpha](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = at::celu(in[0], alpha); };
    };
    r["ThresholdedRelu"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 1.0f);
        return [alpha](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::where(in[0] > alpha, in[0], at::zeros_like(in[0]));
        };
    };
    r["Shrink"] = [](const KernelContext& c) -> Kernel {
        const double bias = c.node.attrFloat("bias", 0.0f), lambd = c.node.attrFloat("lambd", 0.5f);
        return [bias, lambd](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const at::Tensor zero = at::zeros_like(x);
            out[0] = at::where(x < -lambd, (x + bias).to(x.scalar_type()), at::where(x > lambd, (x - bias).to(x.scalar_type()), zero));
        };
    };
}

// Clip, Where, Cast.
void registerClipWhereCastKernels(KernelRegistry& r)
{
    r["Clip"] = [](const KernelContext& c) -> Kernel {
        if (c.opset() < 11) {  // bounds are attributes before opset 11
            const double lo = c.node.attrFloat("min", -std::numeric_limits<float>::max());
            const double hi = c.node.attrFloat("max", std::numeric_limits<float>::max());
            return [lo, hi](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                out[0] = at::clamp(in[0], lo, hi);
            };
        }
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            at::Tensor y = in[0];
            if (in.size() > 1 && in[1].defined())
                y = at::maximum(y, in[1].to(y.scalar_type()));
            if (in.size() > 2 && in[2].defined())
                y = at::minimum(y, in[2].to(y.scalar_type()));
            out[0] = y.is_same(in[0]) ? y.clone() : y;
        };
    };
    r["Where"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::where(in[0].to(at::kBool), in[1], in[2]);
        };
    };
    r["Cast"] = [](const KernelContext& c) -> Kernel {
        const DataType to = castTarget(c.node);
        const auto type = scalarTypeOf(to);
        if (!type)
            c.unsupported("cast to " + dataTypeName(to) + " is not supported");
        const at::ScalarType t = *type;
        return [t](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = in[0].to(t); };
    };
    // CastLike: Cast to the second input's type.
    r["CastLike"] = [](const KernelContext& c) -> Kernel {
        const DataType to = c.hasInput(1) ? c.graph.value(c.node.input(1)).type.dtype : DataType::Undefined;
        if (to != DataType::Undefined && !scalarTypeOf(to))
            c.unsupported("cast to " + dataTypeName(to) + " is not supported");
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = in[0].to(in[1].scalar_type()); };
    };
}

}  // namespace

void registerElementwiseKernels(KernelRegistry& r)
{
    registerArithmeticKernels(r);
    registerComparisonKernels(r);
    registerUnaryMathKernels(r);
    registerActivationKernels(r);
    registerClipWhereCastKernels(r);
}

}  // namespace ramiel
