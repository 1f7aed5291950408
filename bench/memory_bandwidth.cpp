// How fast this host reads memory on 1..P threads: each thread sums its share of a
// buffer far larger than the caches (400 MiB by default), in several streams prefetched ahead (as a
// matrix-vector product reads its rows). A kernel that reads its weights from memory
// once a run (vgg16's classifier at batch 1: 411 MB) cannot take less than its bytes
// over this rate on that many threads, so its scaling from one thread to P is at most
// the ratio of the two rates. GB/s, the best of RUNS at each of several prefetch
// distances. On a virtual machine the rate on several threads follows where the host
// puts them (on cores that share one link to memory or not: 36 or 60 GB/s on two
// threads of one host, docs/performance.md), so take it beside `ramiel calibrate --host`.
// Prints figures; asserts nothing.
//
//   ./build/bin/bench_memory_bandwidth [MIB=400] [MAX_THREADS=hardware threads] [RUNS=8]
#include "core/runtime/torch/target_clones.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <sys/mman.h>

namespace {

constexpr int kStreams = 8;  // per thread, far apart in the buffer
// Software prefetch distances tried, bytes (0: none); the fastest counts. The best distance
// moved with the thread count on one host (512 on one thread, 1024-4096 on two).
constexpr size_t kPrefetchDistances[] = {0, 256, 512, 1024, 2048, 4096};

// A cache line of words (GCC's vector extension: one AVX-512 register, two AVX2 ones).
typedef uint64_t Line __attribute__((vector_size(64)));

// Sums the cache lines of words [begin, end) in kStreams interleaved streams, each
// prefetched `ahead` bytes ahead (none at 0); the sum keeps the reads. Built for
// AVX-512, AVX2 and the baseline, as the runtime's loops.
RAMIEL_CLONES uint64_t readShare(const uint64_t* data, size_t begin, size_t end, size_t ahead)
{
    constexpr size_t kWords = sizeof(Line) / sizeof(uint64_t);
    const size_t stream = (end - begin) / kStreams / kWords * kWords;
    Line sum[kStreams] = {};
    for (size_t i = 0; i < stream; i += kWords)
        for (int s = 0; s < kStreams; ++s) {
            const uint64_t* p = data + begin + size_t(s) * stream + i;
            if (ahead)
                __builtin_prefetch(reinterpret_cast<const char*>(p) + ahead);
            Line line;
            std::memcpy(&line, p, sizeof line);
            sum[s] += line;
        }
    uint64_t total = 0;
    for (const Line& line : sum)
        for (size_t k = 0; k < kWords; ++k)
            total += line[k];
    return total;
}

// The best time of `runs` reads of the whole buffer split evenly over `threads`
// threads that start together.
double bestSeconds(const uint64_t* data, size_t words, int threads, int runs, size_t ahead)
{
    double best = 1e30;
    std::atomic<uint64_t> sink{0};
    for (int r = 0; r < runs; ++r) {
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> team;
        for (int t = 0; t < threads; ++t)
            team.emplace_back([&, t] {
                ready.fetch_add(1);
                while (!go.load(std::memory_order_acquire)) {
                }
                const size_t begin = words / size_t(threads) * size_t(t);
                const size_t end = t + 1 == threads ? words : words / size_t(threads) * size_t(t + 1);
                sink.fetch_add(readShare(data, begin, end, ahead), std::memory_order_relaxed);
            });
        while (ready.load() < threads) {
        }
        const auto start = std::chrono::steady_clock::now();
        go.store(true, std::memory_order_release);
        for (auto& th : team)
            th.join();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (sink.load() == 42)
        std::puts("");
    return best;
}

}  // namespace

int main(int argc, char** argv)
{
    const long mib = argc > 1 ? std::atol(argv[1]) : 400;
    const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
    const int maxThreads = argc > 2 ? std::atoi(argv[2]) : hardware;
    const int runs = argc > 3 ? std::atoi(argv[3]) : 8;
    if (mib < 64 || mib > (1 << 16) || maxThreads < 1 || maxThreads > 4096 || runs < 1) {
        std::fprintf(stderr, "usage: bench_memory_bandwidth [MIB 64..65536] [MAX_THREADS] [RUNS]\n");
        return 2;
    }
    const size_t words = size_t(mib) << 17;  // 8-byte words
    // In huge pages where the kernel gives them, as the runtime keeps its weights
    // (aligned_allocator.cpp): with 4 KiB pages one thread's reads wait on page walks.
    constexpr size_t kHugePage = size_t(2) << 20;
    std::unique_ptr<uint64_t, decltype(&std::free)> buffer(
        static_cast<uint64_t*>(std::aligned_alloc(kHugePage, words * sizeof(uint64_t))), &std::free);
    if (!buffer) {
        std::fprintf(stderr, "bench_memory_bandwidth: cannot allocate %ld MiB\n", mib);
        return 1;
    }
    madvise(buffer.get(), words * sizeof(uint64_t), MADV_HUGEPAGE);
    for (size_t i = 0; i < words; ++i)  // touched, so every page is mapped before timing
        buffer.get()[i] = i;
    std::printf("reading %ld MiB, best of %d runs for each prefetch distance, %d streams a thread\n", mib, runs, kStreams);
    std::printf("threads | GB/s | over 1 thread\n");
    double one = 0;
    for (int t = 1;; t = std::min(2 * t, maxThreads)) {  // 1, 2, 4, ... threads, and MAX_THREADS
        double seconds = 1e30;
        for (size_t ahead : kPrefetchDistances)
            seconds = std::min(seconds, bestSeconds(buffer.get(), words, t, runs, ahead));
        const double rate = double(words) * 8 / seconds / 1e9;
        if (t == 1)
            one = rate;
        std::printf("%7d | %5.1f | %.2fx\n", t, rate, rate / one);
        if (t == maxThreads)
            break;
    }
    return 0;
}
