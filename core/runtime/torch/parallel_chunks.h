// A loop split into chunks that the intra-op threads take as they come. ATen's
// parallel_for gives each thread a fixed share, so a thread that has gone to sleep
// between parallel regions (libomp spins for 1 ms, KMP_BLOCKTIME=1; libgomp about
// 35 us, GOMP_SPINCOUNT=3000) holds up the whole loop for its wake-up, 30-50 us on
// this virtual machine; with chunks handed out as threads arrive the calling thread
// starts at once and the late one takes what is left. Use it only where the result
// does not depend on which thread runs a chunk. The chunks are handed out by one
// atomic counter, not by OpenMP's dynamic schedule: through libgomp's entry points
// libomp takes twice libgomp's time per chunk (330 ns against 165 here, two threads),
// the counter less than either (docs/runtime.md, Threads).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ramiel {

// Elements touched per parallel chunk below which a loop stays on one thread:
// a parallel region costs more than a few microseconds of copying.
constexpr int64_t kGrainElements = 1 << 16;

// The items a chunk takes so that it touches about kGrainElements (at least one).
inline int64_t grainFor(int64_t elementsPerItem)
{
    return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, elementsPerItem));
}

// body(begin, end) over [0, n) in chunks of `chunk` (the last one shorter).
template <typename Body>
void parallelChunks(int64_t n, int64_t chunk, const Body& body)
{
    chunk = std::max<int64_t>(1, chunk);
#ifdef _OPENMP
    const int64_t chunks = (n + chunk - 1) / chunk;
    const int threads = int(std::min<int64_t>(omp_get_max_threads(), chunks));
    if (threads > 1 && !omp_in_parallel()) {
        std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(threads)
        for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < chunks;)
            body(i * chunk, std::min(n, (i + 1) * chunk));
        return;
    }
#endif
    if (n > 0)
        body(0, n);
}

}  // namespace ramiel
