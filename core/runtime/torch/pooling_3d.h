// 3-D max pooling of float tensors, one axis at a time (max pooling is separable), in the
// two layouts video models leave: plain ([N, C, D, H, W] contiguous, ATen's 3-D
// convolutions' output), where each output plane is the max of its window's depth planes,
// then of each output row's window rows, then of each output's window columns; and
// channels-last ([N, D, H, W, C] in memory, what factorized convolutions leave from the 2-D
// path), where the depth planes' max comes first and the 2-D channels-last kernel
// (channels_last.h) pools those planes. libtorch 1.13's max_pool3d finds every output's
// index too, window by window: S3D's 3x3x3 pools took 64-81 ms of its 776 ms run
// (docs/runtime.md). Results do not depend on the thread count.
#pragma once

#include "core/ir/window.h"

#include <ATen/ATen.h>

namespace ramiel {

// Float, 5-D, contiguous or channels-last; symmetric pads of at most half the kernel
// (ATen's limits).
bool maxPool3dApplies(const at::Tensor& x, const Window& w);
// The output in the input's layout.
at::Tensor maxPool3d(const at::Tensor& x, const Window& w);

}  // namespace ramiel
