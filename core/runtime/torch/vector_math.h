// Float loops where ATen's kernels run scalar or slowly, most on glibc's vector
// math library (libmvec): Erf (GELU's, decomposed in exported transformers),
// SiLU (fuse-silu's node and a convolution's activation; an AVX-512 exp of
// Ramiel's where the processor has it), Softmax over short rows (attention's)
// and layer normalization over the last dimensions.
#pragma once

#include <ATen/ATen.h>

namespace ramiel {

// erf of every element of a float tensor, split over the intra-op threads
// (libmvec's erff: within 1e-6 relative of the exact value outside denormals;
// ATen's at::erf called scalar erff here, 6x slower on one thread).
at::Tensor erfFloat(const at::Tensor& x);

// SiLU (x · sigmoid(x)) of every element of a float tensor, in its own layout
// (channels-last stays so), split over the intra-op threads: with AVX-512 an exp
// polynomial and rcp14 with a Newton step (within 2.5e-7 relative), otherwise
// libmvec's expf (efficientnet_b0's 49 SiLUs: the model 10.85 -> 8.6-9.4 ms on
// one thread against ATen's at::silu, with libmvec).
at::Tensor siluFloat(const at::Tensor& x);

// SiLU in place on a dense float tensor (contiguous or channels-last), each
// intra-op thread on a fixed contiguous share.
void siluFloatInPlace(at::Tensor& x);

// SiLU and sigmoid of n floats on the calling thread (y may be x), for vectors
// too short to share: the AVX-512 exp above, or libmvec's expf.
void siluRun(float* y, const float* x, int64_t n);
void sigmoidRun(float* y, const float* x, int64_t n);
// tanh of n floats on the calling thread (y may be x): libmvec's tanhf.
void tanhRun(float* y, const float* x, int64_t n);

// Softmax along the last dimension of a float tensor with at least one element
// in it, rows split over the intra-op threads (libmvec's expf; ATen's kernel
// took 2.1x as long on swin_t's attention rows of 49).
at::Tensor softmaxLastFloat(const at::Tensor& x);

// Layer normalization of a float tensor over its last weight.numel() elements
// (a positive count dividing x's), scaled by weight and shifted by bias (undefined
// or of weight's count), rows split over the intra-op threads; contiguous output.
at::Tensor layerNormLastFloat(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, float eps);

}  // namespace ramiel
