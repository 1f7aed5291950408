// Operators written out as exporters write them, for the tests that check a fusion or a
// fused kernel against the standard operators it stands for.
#pragma once

#include "onnx_builder.h"

#include <string>
#include <vector>

namespace ramiel::test {

// The per-channel affine and per-group parameters of writtenOutGroupNorm, as functions of
// the channel or group index, so a test can compute what the fused node holds.
float groupNormScale(int64_t group);    // InstanceNormalization's scale
float groupNormBias(int64_t group);     // InstanceNormalization's bias
float channelScale(int64_t channel);    // the Mul's
float channelBias(int64_t channel);     // the Add's

// y = F.group_norm(x, groups) as PyTorch exports it (opset 13): Reshape to [0, groups, -1],
// InstanceNormalization (epsilon 1e-5) with the groups' scale and bias, Reshape back (to
// `restore` when given, else to Shape(x)), Mul by the channels' scale and Add of their bias
// ([channels, 1, ..., 1] for x of `rank`). Values and initializers are named after `p`.
void writtenOutGroupNorm(OnnxBuilder& b, const std::string& x, const std::string& p, int64_t channels, int64_t groups,
                         size_t rank, const std::string& y, const std::vector<int64_t>& restore = {});

}  // namespace ramiel::test
