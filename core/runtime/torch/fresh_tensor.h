// Uninitialised float tensors for kernels' outputs, made without ATen's dispatcher
// (at::detail::empty_cpu and empty_strided_cpu, what at::empty ends in). Inside a
// model the dispatcher's path is cold at every node, the node before having streamed
// its data through the caches: at::empty took 4-8 us a convolution's output there
// (medians, resnet18 and mnasnet1_0 on one thread; 0.3 us hot), these 1.3-3 us less.
#pragma once

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>

namespace ramiel {

// A float tensor of `sizes` laid out as `format` says.
inline at::Tensor emptyFloat(c10::IntArrayRef sizes, at::MemoryFormat format)
{
    return at::detail::empty_cpu(sizes, at::kFloat, false, format);
}

// A float tensor of x's sizes and strides; x must be non-overlapping and dense.
inline at::Tensor emptyFloatLike(const at::Tensor& x)
{
    return at::detail::empty_strided_cpu(x.sizes(), x.strides(), at::kFloat);
}

}  // namespace ramiel
