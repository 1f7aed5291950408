// Winograd convolutions (oneDNN's F(2x2, 3x3), which runs on its blocked
// nChw16c layout), blocked stages (below), and the values that stay in that
// layout from one such convolution to the next: ResNet's 3x3 pairs, and a
// block's output read by the next block's first convolution and as its summand.
// Each value held so saves a reorder out and one in (or the summand's), memory
// traffic that does not speed up with threads (docs/runtime.md).
#pragma once

#include "core/ir/graph.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ramiel {

// The rule: a 3x3 convolution of stride 1 and dilation 1 (empty lists: the
// defaults), one group, whose channels give the transforms enough work to save
// (in >= 32, out >= 64, in·out / (in + out) >= 24) on a 14x14 to 56x56 output.
bool wantsWinograd(int64_t in, int64_t out, int64_t kh, int64_t kw, int64_t outPixels, int64_t groups,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

// Where the rule admits a convolution and oneDNN has a Winograd kernel for it, which
// kernel runs. By default (`measured`) the faster of it and the direct kernel, the two
// timed in turns in the node's first kKernelTrialCalls calls of each shape and thread count:
// on the Intel hosts Winograd took 0.7-0.85x of the direct kernel's time on two threads
// at 14x14, on an AMD one 1.2-2.1x inside GoogLeNet (docs/runtime.md).
// RAMIEL_WINOGRAD=always or =never in the environment fixes the choice (read when a
// model is compiled), for comparisons; any other value is an Error(Usage).
enum class WinogradChoice { Measured, Always, Never };
WinogradChoice winogradChoice();

// RAMIEL_GROUPED_LAYOUT=channels-last or =blocked in the environment fixes the layout of
// the grouped convolutions that try oneDNN's blocked one (kernels_convolution.cpp,
// wantsBlockedGroups), for comparisons; channels-last also turns the blocked stages off.
// =measured is the default. Read when a model is compiled; any other value is an Error(Usage).
enum class GroupedLayoutChoice { Measured, ChannelsLast, Blocked };
GroupedLayoutChoice groupedLayoutChoice();

// A grouped convolution that runs on the blocked layout inside a blocked stage: wide
// groups of 16 or 32 channels whose pixels take a multiple of 2 KiB, on enough pixels.
// Channels-last, oneDNN 2.6's grouped kernels load a group's channels at neighbouring
// pixels from addresses a multiple of 2 KiB apart, which share a few sets of the L1
// cache; blocked, a group's block is contiguous. Alone, hot caches, one / two threads (AMD
// EPYC): ResNeXt-101 64x4d's 1024 channels in 64 groups at 14x14 0.54 / 0.33 -> 0.30 /
// 0.17 ms, 32x8d's 32 groups 0.92 / 0.48 -> 0.68 / 0.37, its 512 channels in 32 groups at
// 28x28 1.40 / 0.67 -> 0.67 / 0.36; 512 channels at 14x14 the same, 2048 at 7x7 1.15x slower.
// Its reorders in and out would take what it saves, hence the stage.
bool wantsBlockedStage(int64_t groups, int64_t in, int64_t out, int64_t outPixels);
// A 1x1 convolution that a blocked stage may hold: oneDNN's blocked kernel (jit_1x1) took the
// time of the channels-last one (brgconv_1x1) on 1024 -> 1024 at 14x14, 512 -> 512 at
// 28x28 and 1024 -> 2048 at 14x14, on one and two threads; 2048 -> 2048 at 7x7 3-6 % more,
// 64 -> 256 at 56x56 2.6x.
bool wantsBlockedOneByOne(int64_t in, int64_t out, int64_t outPixels);

// Which values stay blocked, by value id, and which nodes run on the blocked layout as
// part of a blocked stage, by node id. A value stays blocked where every reader reads it
// as its input or summand, it is not a graph output, its channels are a multiple of 16 and
// either (`winograd`) it is a Winograd convolution's output read only by Winograd
// convolutions (as the rule predicts from the inferred shapes), or (`stages`) it passes
// between convolutions of a blocked stage: a stretch of convolutions joined by such values
// (wantsBlockedOneByOne and wantsBlockedStage; ResNeXt's 1x1 -> grouped 3x3 -> 1x1 blocks
// and the blocks' outputs between them) with a grouped one in it. A Winograd reader whose
// primitive turns out otherwise reorders the value back itself, so a wrong prediction
// costs time, not correctness; the stages' convolutions always run blocked. Weights and
// bias are constants by `sources` (constantSources: through Identity nodes too).
struct BlockedLayout {
    std::vector<bool> values;  // by value id
    std::vector<bool> stages;  // by node id
};
BlockedLayout blockedLayout(const Graph& g, const std::vector<ValueId>& sources, bool winograd, bool stages);

// A blocked value is a contiguous float tensor [N, C/16, H, W, 16] standing for
// the logical [N, C, H, W]; isBlocked tells it from the logical tensor where a
// 2-D convolution's input is known to be 4-D.
bool isBlocked(const at::Tensor& t);
at::Tensor emptyBlocked(const std::vector<int64_t>& logical);
// A blocked tensor's [N, C, H, W]; any other tensor's own sizes.
std::vector<int64_t> logicalSizes(const at::Tensor& t);
// The logical [N, C, H, W], channels-last (one copy).
at::Tensor unblocked(const at::Tensor& blocked);

}  // namespace ramiel
