# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
# </check-only>
# Operators in training mode, as the runtime computes them: Dropout whose ratio or mode is known
# only when the code runs, BatchNormalization on its batch's statistics.


def onnx_dropout(x, ratio, training):
    """Dropout with its ratio or training mode tensors (None: ONNX's defaults, 0.5 and
    inference): [output, mask]. In training each element is kept with probability 1 - ratio and
    scaled by 1 / (1 - ratio), drawn as the runtime draws it (another generator, other draws)."""
    ratio = float(ratio) if ratio is not None else 0.5
    if training is None or not bool(training) or ratio == 0.0:
        return [x, torch.ones_like(x, dtype=torch.bool)]
    if not 0.0 < ratio < 1.0:
        raise ValueError(f'Dropout ratio {ratio} is outside [0, 1)')
    keep = torch.empty(x.shape).bernoulli_(1.0 - ratio)
    return [x * (keep * (1.0 / (1.0 - ratio))).to(x.dtype), keep.to(torch.bool)]


def onnx_batch_norm_training(x, scale, bias, mean, var, epsilon, momentum):
    """BatchNormalization in training: x normalized by the batch's mean and population variance
    over every axis but the channels'; [y, running mean, running variance (each moved towards the
    batch's by 1 - momentum), the batch's mean, the batch's variance]."""
    axes = [0] + list(range(2, x.dim()))
    batch_var, batch_mean = torch.var_mean(x, axes, unbiased=False)
    channel = [1, x.shape[1]] + [1] * (x.dim() - 2)
    y = (x - batch_mean.reshape(channel)) * (torch.rsqrt(batch_var + epsilon) * scale).reshape(channel) + bias.reshape(channel)
    return [y, mean * momentum + batch_mean * (1 - momentum), var * momentum + batch_var * (1 - momentum), batch_mean,
            batch_var]
