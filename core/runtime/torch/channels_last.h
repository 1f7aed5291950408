// Hand-written kernels for float activations laid out channels-last (what the
// convolutions produce): the image's copy into that layout, pooling, per-channel
// scaling, Relu in place, Concat along channels and channel shuffles. Callers
// check the Applies functions first and otherwise take ATen.
#pragma once

#include "core/ir/window.h"

#include <ATen/ATen.h>

#include <functional>
#include <vector>

namespace ramiel {

// 4-D float, channels-last, and not also plain contiguous.
bool isChannelsLastFloat(const at::Tensor& x);

// A contiguous float [N, C, H, W] of 2 to 4 channels, not also channels-last:
// a model's image before its first convolution.
bool isPlanarImage(const at::Tensor& x);

// x laid out channels-last. A contiguous float image of at most 4 channels (a
// model's input, before its first convolution) is interleaved by Ramiel's own
// loop, split into chunks that threads take as they come (parallel_chunks.h):
// ATen's copy took 100-160 us on one thread for a 3 x 224 x 224 image.
at::Tensor asChannelsLast(const at::Tensor& x);

// Rows [row0, row0 + rows) of one planar float image (`c` planes of h x w)
// into `out`, channels-last: rows * w pixels of c interleaved channels.
void interleaveImageRows(const float* image, int64_t c, int64_t h, int64_t w, int64_t row0, int64_t rows,
                         float* out);

// 2-D max pooling with symmetric pads of at most half the kernel (ATen's limits).
bool maxPoolChannelsLastApplies(const at::Tensor& x, const Window& w);
at::Tensor maxPoolChannelsLast(const at::Tensor& x, const Window& w);

// 2-D average pooling, the same limits, without ceil mode or dilation.
bool avgPoolChannelsLastApplies(const at::Tensor& x, const Window& w);
at::Tensor avgPoolChannelsLast(const at::Tensor& x, const Window& w, bool countIncludePad);

// Mean over the two spatial dimensions; x must satisfy isChannelsLastFloat.
at::Tensor globalAveragePoolChannelsLast(const at::Tensor& x);

// Inference batch normalization, y = x * scale + shift per channel, of the parts
// concatenated along channels (4-D float tensors of equal N, H, W, all channels-last
// and one of them not also plain contiguous; one part for BatchNormalization, several
// for ai.ramiel.FusedBatchNorm's Concat), scale and shift contiguous float with one
// value per channel of them all; then `activation`, where given, run in place over a
// few pixels at a time, still in cache. Each intra-op thread takes a fixed contiguous
// share of the pixels.
bool batchNormChannelsLastApplies(const std::vector<at::Tensor>& parts, int64_t channels);
at::Tensor batchNormChannelsLast(const std::vector<at::Tensor>& parts, const at::Tensor& scale,
                                 const at::Tensor& shift, const std::function<void(float*, int64_t)>& activation);

// Group normalization with a per-channel affine (ai.ramiel.FusedGroupNorm,
// core/ir/fused_ops.h) of x, which must satisfy isChannelsLastFloat, in `groups` groups of
// consecutive channels (the caller checks `groups` divides them), scale and bias
// contiguous float of one value per channel; then `activation`, where given, over a few
// pixels at a time, still in cache. Two passes over x: the groups' sums (shifted by a
// value of the group, in double across blocks of pixels, so a large mean costs no
// precision), then each pixel centred, scaled and shifted. The pixels are cut into blocks of a
// fixed size whatever the thread count, so the result does not depend on it.
bool groupNormChannelsLastApplies(const at::Tensor& x, int64_t groups);
at::Tensor groupNormChannelsLast(const at::Tensor& x, int64_t groups, const at::Tensor& scale, const at::Tensor& bias,
                                 float epsilon, const std::function<void(float*, int64_t)>& activation);

// x * s with s of one value per image and channel ([N or 1, C, 1, 1]; a
// squeeze-excite block's scale): x must satisfy isChannelsLastFloat and s be
// float. Each thread scales a fixed contiguous share of the pixels. Written
// into x itself where `inPlace` (the caller holds the only reference).
bool channelScaleChannelsLastApplies(const at::Tensor& x, const at::Tensor& s);
at::Tensor channelScaleChannelsLast(const at::Tensor& x, const at::Tensor& s, bool inPlace);

// Relu written into x itself (a dense float tensor, in practice a channels-last
// activation that nothing else holds): no new tensor, no writes to memory the caches
// do not hold. Each intra-op thread takes a fixed contiguous share, the share the
// kernel before it (a batch normalization, DenseNet's) wrote in its own core's cache.
// NaN stays NaN. Returns x.
bool reluInPlaceApplies(const at::Tensor& x);
at::Tensor reluInPlace(const at::Tensor& x);

// Concat along dimension 1 of 4-D float tensors of equal N, H, W, all channels-last.
bool concatChannelsLastApplies(const std::vector<at::Tensor>& parts);
at::Tensor concatChannelsLast(const std::vector<at::Tensor>& parts);

// ai.ramiel.ChannelShuffle (core/ir/fused_ops.h) on 4-D float tensors of equal
// N, H, W, all channels-last and one of them not also plain contiguous: the
// parts concatenated along channels, shuffled in `group` groups, cut into
// outputs of `split` channels, each channels-last. The caller has checked that
// `group` divides the channels and `split` sums to them.
bool channelShuffleChannelsLastApplies(const std::vector<at::Tensor>& parts);
std::vector<at::Tensor> channelShuffleChannelsLast(const std::vector<at::Tensor>& parts, int64_t group,
                                                   const std::vector<int64_t>& split);

}  // namespace ramiel
