// Operators that exist only inside Ramiel, made by the fusion passes. They
// live in their own domain so that no tool mistakes them for ONNX operators;
// the runtime executes them and the ONNX exporter writes them back out as the
// standard operators they stand for.
#pragma once

namespace ramiel {

// Domain of Ramiel's private operators (opset version 1).
inline constexpr const char* kRamielDomain = "ai.ramiel";

// FusedConv: ONNX Conv (same inputs and attributes) followed by an activation
// applied to its output in place; an optional fourth input Z (the output's
// shape) is added to the convolution's output before the activation, as in
// ONNX Runtime's com.microsoft.FusedConv. Attributes as that operator names them
// (with a summand, the activation may be absent: the sum is the output):
//   activation        "Relu", "LeakyRelu", "Sigmoid", "HardSwish", "Clip" or
//                     "Silu" (x · sigmoid(x), Ramiel's own: written back as Sigmoid, Mul)
//   activation_params LeakyRelu: [alpha]; Clip: [min, max]; others: none
inline constexpr const char* kFusedConv = "FusedConv";

// Gelu: y = x · (1 + erf(x / √2)) / 2 on one float input, as ONNX Gelu (opset 20)
// with approximate = "none"; made from the five nodes older exporters write.
inline constexpr const char* kGelu = "Gelu";

// Silu: y = x · sigmoid(x) on one float input (PyTorch's SiLU, swish); made from
// Sigmoid and Mul.
inline constexpr const char* kSilu = "Silu";

// HardSwish: y = x · HardSigmoid(x) with alpha 1/6 and beta 1/2, as ONNX HardSwish
// (opset 14), for models of earlier opsets; made from HardSigmoid and Mul.
inline constexpr const char* kHardSwish = "HardSwish";

// MatMulAdd: Y = MatMul(A, B) + C with B a 2-D [K, N] matrix and C of N elements
// (any shape [1, ..., 1, N] no longer than Y's) added to every row, as linear
// layers export (MatMul, then Add of the bias) where A has more than two
// dimensions and ONNX's Gemm does not apply. Three inputs; one optional attribute,
//   activation        "Gelu": GELU (erf form) applied to the sum, as a transformer's
//                     or ConvNeXt's first linear layer is followed.
inline constexpr const char* kMatMulAdd = "MatMulAdd";

// ChannelShuffle: ShuffleNet's channel shuffle, with the Concat before it and
// the Slices (or Split) after it. Inputs: one or more tensors of rank 4 and
// equal N, H, W, concatenated along dimension 1 into x of C channels. x's
// channels are regrouped as a [group, C / group] matrix and transposed (what
// Reshape [N, group, C/group, H, W] -> Transpose [0, 2, 1, 3, 4] ->
// Reshape [N, C, H, W] does): channel j of the result is channel
// (j % group) * (C / group) + j / group of x. The result is cut along
// dimension 1 into the outputs, output k having split[k] channels.
// Attributes:
//   group  the number of groups, >= 1, dividing C
//   split  one channel count (>= 1) per output, summing to C
inline constexpr const char* kChannelShuffle = "ChannelShuffle";

// LayerNormalization: ONNX LayerNormalization (opset 17) for models of earlier
// opsets, made from the eight or nine nodes PyTorch writes there. Inputs X,
// Scale and optionally B, each of Scale and B of the normalized shape (X's last
// -axis dimensions); one output. Attributes:
//   axis     the first normalized dimension, negative (-k: the last k)
//   epsilon  added to the variance
inline constexpr const char* kLayerNorm = "LayerNormalization";

// FusedBatchNorm: ONNX BatchNormalization in inference form (one output) whose
// input X is the Concat along dimension 1 of the node's first inputs, followed by
// an optional activation, as DenseNet's pre-activation layers run Concat ->
// BatchNormalization -> Relu. Inputs X_1, ..., X_k (k >= 1, concatenated along
// dimension 1 into X), then scale, B, input_mean and input_var as
// BatchNormalization's. Attributes:
//   epsilon           as BatchNormalization's (default 1e-5)
//   activation        as FusedConv's, optional
//   activation_params as FusedConv's
inline constexpr const char* kFusedBatchNorm = "FusedBatchNorm";

// FusedGroupNorm: group normalization with a per-channel affine, as ONNX
// GroupNormalization (opset 21) computes it, then an optional activation; made from
// what PyTorch exports for F.group_norm (Reshape to [N, G, -1], InstanceNormalization,
// Reshape back, Mul, Add) and the activation after it. Inputs X of rank >= 3 (N, C,
// then the spatial dimensions), scale and bias of C values; one output of X's shape.
// The C channels form num_groups groups of C / num_groups consecutive channels; each
// image's group is normalized by its own mean and (population) variance over its
// channels and positions, y = (x - mean) / sqrt(variance + epsilon) * scale[c] + bias[c].
// Attributes:
//   num_groups        >= 1, dividing C
//   epsilon           added to the variance (default 1e-5)
//   activation        as FusedConv's, optional
//   activation_params as FusedConv's
inline constexpr const char* kFusedGroupNorm = "FusedGroupNorm";

}  // namespace ramiel
