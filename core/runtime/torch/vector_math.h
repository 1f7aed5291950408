// Float math functions on glibc's vector math library (libmvec), where ATen's
// kernels run scalar: Erf (GELU's, decomposed in exported transformers).
#pragma once

#include <ATen/ATen.h>

namespace ramiel {

// erf of every element of a float tensor, split over the intra-op threads
// (libmvec's erff: within 1e-6 relative of the exact value outside denormals;
// ATen's at::erf called scalar erff here, 6x slower on one thread).
at::Tensor erfFloat(const at::Tensor& x);

}  // namespace ramiel
