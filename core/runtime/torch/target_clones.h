// RAMIEL_CLONES: a vector loop built for AVX-512, AVX2 and the baseline, the
// copy for this processor chosen when the library loads (GCC's target_clones).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#define RAMIEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RAMIEL_CLONES
#endif
