// Random generators: RandomNormal, RandomUniform, RandomNormalLike,
// RandomUniformLike, Bernoulli and Multinomial. Each node draws from a generator
// of its own, seeded by its `seed` attribute where it has one (so a compiled
// model draws the same sequence run after run from its first), else from
// PyTorch's default generator. The draws are PyTorch's, not the numbers NumPy or
// ONNX Runtime would draw from the same seed.
#include "core/runtime/torch/kernel.h"

#include "core/util/error.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <optional>

namespace ramiel {

namespace {

// The node's generator: seeded by its `seed` (a float attribute in these operators), its
// integer part where that fits in 64 bits, else the double's bits with their high half
// folded into the low one, which is all PyTorch's Mersenne twister reads (converting such
// a value is undefined, and on x86 made every seed beyond 2^63, infinities and NaN one).
std::optional<at::Generator> generatorOf(const Node& n)
{
    const Attribute* seed = n.attr("seed");
    if (!seed)
        return std::nullopt;
    const double value = seed->kind == Attribute::Kind::Float ? double(seed->f) : double(seed->i);
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    const bool fits = value >= -0x1p63 && value < 0x1p63;  // false for NaN
    return at::make_generator<at::CPUGeneratorImpl>(fits ? uint64_t(int64_t(value)) : bits ^ (bits >> 32));
}

void expectFloating(at::ScalarType t, const std::string& op)
{
    if (!at::isFloatingType(t))
        throw Error(ErrorKind::Runtime, {}, op + " draws floating-point values, not " + std::string(c10::toString(t)));
}

// RandomNormal and RandomUniform (the shape from the attribute), and their Like
// forms (the input's shape and, without dtype, its type).
KernelFactory randomKernel(bool normal, bool like)
{
    return [normal, like](const KernelContext& c) -> Kernel {
        const std::optional<at::Generator> gen = generatorOf(c.node);
        const std::optional<at::ScalarType> type = c.elementTypeAttr("dtype", like ? std::nullopt : std::optional(at::kFloat));
        const double a = normal ? c.node.attrFloat("mean", 0.0f) : c.node.attrFloat("low", 0.0f);
        const double b = normal ? c.node.attrFloat("scale", 1.0f) : c.node.attrFloat("high", 1.0f);
        if (!std::isfinite(a) || !std::isfinite(b) || (normal ? b < 0 : b < a))
            c.unsupported(normal ? "mean and scale must be finite, scale not negative"
                                 : "low and high must be finite, high not below low");
        const std::vector<int64_t> shape = c.node.attrInts("shape");
        if (!like && !c.node.attr("shape"))
            c.unsupported("the shape attribute is missing");
        const std::string op = c.node.opType;
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::ScalarType t = type ? *type : in[0].scalar_type();
            expectFloating(t, op);
            at::Tensor y = at::empty(like ? in[0].sizes().vec() : shape, at::TensorOptions().dtype(at::kDouble));
            const c10::optional<at::Generator> g = gen ? c10::optional<at::Generator>(*gen) : c10::nullopt;
            if (normal)
                y.normal_(a, b, g);
            else if (b > a)
                y.uniform_(a, b, g);
            else
                y.fill_(a);
            out[0] = y.to(t);
        };
    };
}

// Bernoulli: 1 with each input's probability, else 0, in dtype (the input's type by default).
Kernel bernoulliKernel(const KernelContext& c)
{
    const std::optional<at::Generator> gen = generatorOf(c.node);
    const std::optional<at::ScalarType> type = c.elementTypeAttr("dtype", std::nullopt);
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor p = in[0].to(at::kDouble);
        if (p.numel() > 0 && (p.min().item<double>() < 0 || p.max().item<double>() > 1 || p.isnan().any().item<bool>()))
            throw Error(ErrorKind::Runtime, {}, "Bernoulli probabilities must lie in [0, 1]");
        const c10::optional<at::Generator> g = gen ? c10::optional<at::Generator>(*gen) : c10::nullopt;
        out[0] = at::bernoulli(p, g).to(type.value_or(in[0].scalar_type()));
    };
}

// Multinomial: sample_size classes per row of [batch, classes] unnormalized log
// probabilities, drawn with replacement, as int32 (or dtype's int64).
Kernel multinomialKernel(const KernelContext& c)
{
    const std::optional<at::Generator> gen = generatorOf(c.node);
    const int64_t samples = c.node.attrInt("sample_size", 1);
    if (samples < 1)
        c.unsupported("sample_size " + std::to_string(samples) + " must be positive");
    const at::ScalarType type = *c.elementTypeAttr("dtype", at::kInt);
    if (type != at::kInt && type != at::kLong)
        c.unsupported("dtype must be int32 or int64");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& logits = in[0];
        if (logits.dim() != 2 || logits.size(1) == 0)
            throw Error(ErrorKind::Runtime, {}, "the input of shape " + shapeText(logits.sizes()) +
                                                    " is not [batch, classes] with at least one class");
        const at::Tensor p = at::softmax(logits.to(at::kDouble), 1);
        if (p.isnan().any().item<bool>())
            throw Error(ErrorKind::Runtime, {}, "the log probabilities give no distribution (NaN or infinite values)");
        const c10::optional<at::Generator> g = gen ? c10::optional<at::Generator>(*gen) : c10::nullopt;
        out[0] = at::multinomial(p, samples, /*replacement=*/true, g).to(type);
    };
}

}  // namespace

void registerRandomKernels(KernelRegistry& r)
{
    r["RandomNormal"] = randomKernel(true, false);
    r["RandomUniform"] = randomKernel(false, false);
    r["RandomNormalLike"] = randomKernel(true, true);
    r["RandomUniformLike"] = randomKernel(false, true);
    r["Bernoulli"] = bernoulliKernel;
    r["Multinomial"] = multinomialKernel;
}

}  // namespace ramiel
