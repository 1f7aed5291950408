#include "core/runtime/torch/activation_loops.h"

#include "core/runtime/torch/target_clones.h"

namespace ramiel {

RAMIEL_CLONES void reluRun(float* __restrict x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = 0.0f > x[i] ? 0.0f : x[i];
}

RAMIEL_CLONES void leakyReluRun(float* __restrict x, int64_t n, float alpha)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] < 0.0f ? alpha * x[i] : x[i];
}

RAMIEL_CLONES void clipRun(float* __restrict x, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
}

RAMIEL_CLONES void hardSwishRun(float* __restrict x, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        const float t = x[i] + 3.0f;
        x[i] = x[i] * (t < 0.0f ? 0.0f : t > 6.0f ? 6.0f : t) / 6.0f;
    }
}

RAMIEL_CLONES bool anyNonFinite(const float* __restrict x, int64_t n)
{
    int found = 0;
    for (int64_t i = 0; i < n; ++i)
        found |= !(x[i] - x[i] == 0.0f);  // NaN for NaN and for either infinity
    return found != 0;
}

}  // namespace ramiel
