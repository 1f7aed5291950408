// The activation of Ramiel's fused nodes (core/ir/fused_ops.h), read once from a node's
// attributes and applied to a kernel's output.
#pragma once

#include "core/runtime/torch/activation_loops.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/vector_math.h"

#include <ATen/ATen.h>

namespace ramiel {

// The activation a fused node applies to its output, after the summand where a FusedConv has
// one: FusedConv's (a oneDNN post-op where the convolution runs there, else in place after
// it) and FusedBatchNorm's.
struct FusedActivation {
    enum Kind { None, Relu, LeakyRelu, Clip, Sigmoid, HardSwish, Silu } kind = None;
    float a = 0.0f, b = 0.0f;  // LeakyRelu: alpha; Clip: lower and upper bounds

    // In place on a convolution's output, where no primitive applied it.
    void applyTo(at::Tensor& y) const
    {
        switch (kind) {
        case None: break;
        case Relu: at::relu_(y); break;
        case LeakyRelu: at::leaky_relu_(y, a); break;
        case Clip: at::clamp_(y, a, b); break;
        case Sigmoid: at::sigmoid_(y); break;
        case HardSwish: at::hardswish_(y); break;
        case Silu:
            if (y.scalar_type() == at::kFloat && y.is_non_overlapping_and_dense())
                siluFloatInPlace(y);
            else
                at::silu_(y);
            break;
        }
    }

    // In place on n floats, on the calling thread (a one-pixel convolution's output, a
    // block of a fused batch normalization's); NaN stays NaN, as in ATen's.
    void applyTo(float* y, int64_t n) const
    {
        switch (kind) {
        case None: break;
        case Relu: reluRun(y, n); break;
        case LeakyRelu: leakyReluRun(y, n, a); break;
        case Clip: clipRun(y, n, a, b); break;
        case Sigmoid: sigmoidRun(y, y, n); break;
        case HardSwish: hardSwishRun(y, n); break;
        case Silu: siluRun(y, y, n); break;
        }
    }

    // Whether oneDNN's primitive applies it as a post-op. Not SiLU: oneDNN 2.6's
    // swish post-op took 1.5x as long as a pass of siluFloatInPlace over the
    // output while it is still in cache (efficientnet_v2_s 3-5 % faster on one
    // thread, 2-3 % on two).
    bool isPostOp() const { return kind != Silu; }
};

// A fused node's activation (attributes activation and activation_params); None without
// one. Refuses (KernelContext::unsupported) an activation it does not know.
FusedActivation fusedActivation(const KernelContext& c);

}  // namespace ramiel
