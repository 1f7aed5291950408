// RAMIEL_CLONES: a vector loop built for AVX-512, AVX2 and the baseline, the
// copy for this processor chosen when the library loads (GCC's target_clones).
// Clang 14 refuses target_clones on function templates (the recurrent cell
// loops are one), so a clang build (the fuzzers') takes the baseline alone.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RAMIEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RAMIEL_CLONES
#endif
