// Winograd convolutions (oneDNN's F(2x2, 3x3), which runs on its blocked
// nChw16c layout) and the values that stay in that layout from one such
// convolution to the next: ResNet's 3x3 pairs, and a block's output read by
// the next block's first convolution and as its summand. Each value held so
// saves a reorder out and one in (or the summand's), memory traffic that does
// not speed up with threads (docs/runtime.md).
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

// By value id: true where a Winograd convolution's output stays blocked. Every
// reader must be a Winograd convolution (as the rule predicts from the inferred
// shapes) reading it as its input or summand, the value not a graph output, the
// channels a multiple of 16. A reader whose primitive turns out otherwise
// reorders it back itself, so a wrong prediction costs time, not correctness.
std::vector<bool> blockedValues(const Graph& g);

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
