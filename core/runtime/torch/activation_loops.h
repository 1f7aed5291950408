// Piecewise-linear activations in place on a run of floats, on the calling
// thread, each built for AVX-512, AVX2 and the baseline (target_clones.h): a
// fused node's activation on a block of its output still in cache. Compiled
// without -ffast-math, so NaN stays NaN as in ATen's (0 > NaN is false); and
// the test for NaN and infinity that decides whether oneDNN may apply one (it does not keep NaN).
#pragma once

#include <cstdint>

namespace ramiel {

void reluRun(float* x, int64_t n);                      // max(x, 0)
void leakyReluRun(float* x, int64_t n, float alpha);    // x < 0 ? alpha x : x
void clipRun(float* x, int64_t n, float lo, float hi);  // x < lo ? lo : x > hi ? hi : x
void hardSwishRun(float* x, int64_t n);                 // x · clamp(x + 3, 0, 6) / 6
bool anyNonFinite(const float* x, int64_t n);           // whether a NaN or an infinity is among them

}  // namespace ramiel
