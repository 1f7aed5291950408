// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Operators in training mode, as the runtime computes them: Dropout whose ratio or mode is known
// only when the code runs, BatchNormalization on its batch's statistics.

// Dropout with its ratio or training mode tensors (undefined: ONNX's defaults, 0.5 and
// inference): {output, mask}. In training each element is kept with probability 1 - ratio and
// scaled by 1 / (1 - ratio), drawn as the runtime draws it (another generator, other draws).
std::vector<at::Tensor> onnxDropout(const at::Tensor& x, const at::Tensor& ratioTensor, const at::Tensor& training)
{
    const double ratio = ratioTensor.defined() ? ratioTensor.item<double>() : 0.5;
    if (!training.defined() || !training.item<bool>() || ratio == 0.0)
        return {x, at::ones_like(x, at::kBool)};
    if (!(ratio > 0.0 && ratio < 1.0))
        throw std::runtime_error("Dropout ratio " + std::to_string(ratio) + " is outside [0, 1)");
    const at::Tensor keep = at::empty(x.sizes(), at::kFloat).bernoulli_(1.0 - ratio);
    return {x * (keep * (1.0 / (1.0 - ratio))).to(x.scalar_type()), keep.to(at::kBool)};
}

// BatchNormalization in training: x normalized by the batch's mean and population variance over
// every axis but the channels'; {y, running mean, running variance (each moved towards the
// batch's by 1 - momentum), the batch's mean, the batch's variance}.
std::vector<at::Tensor> onnxBatchNormTraining(const at::Tensor& x, const at::Tensor& scale, const at::Tensor& bias,
                                              const at::Tensor& mean, const at::Tensor& var, double epsilon, double momentum)
{
    Ints axes{0}, channel(size_t(x.dim()), 1);
    for (int64_t i = 2; i < x.dim(); ++i)
        axes.push_back(i);
    channel[1] = x.size(1);
    const auto [batchVar, batchMean] = at::var_mean(x, axes, /*unbiased=*/false);
    const at::Tensor y = (x - batchMean.reshape(channel)) * (at::rsqrt(batchVar + epsilon) * scale).reshape(channel) +
                         bias.reshape(channel);
    return {y, mean * momentum + batchMean * (1 - momentum), var * momentum + batchVar * (1 - momentum), batchMean, batchVar};
}
