// 3-D max pooling of float tensors laid out plainly ([N, C, D, H, W] contiguous, as the
// video models' 3-D convolutions leave them), one axis at a time: the window's depth
// planes into their max, its rows into theirs, then each output's columns. libtorch
// 1.13's max_pool3d finds every output's index too, window by window: S3D's 3x3x3
// pools took 64-81 ms of its 776 ms run (docs/runtime.md). Work is split over output
// planes, so results do not depend on the thread count.
#pragma once

#include "core/ir/window.h"

#include <ATen/ATen.h>

namespace ramiel {

// Float, 5-D, contiguous; symmetric pads of at most half the kernel (ATen's limits).
bool maxPoolPlanarApplies(const at::Tensor& x, const Window& w);
at::Tensor maxPoolPlanar(const at::Tensor& x, const Window& w);

}  // namespace ramiel
