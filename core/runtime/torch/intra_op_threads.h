// Intra-op threads, set per calling thread.
//
// at::set_num_threads also rebuilds libtorch's process-wide pthreadpool
// (thread creation, 140-220 µs here, and the new threads spin), so calling it
// per run or per node slows a 2-thread googlenet from ~50 to ~100 ms. OpenMP,
// which ATen's parallel_for, oneDNN and OpenBLAS use, keeps its setting per
// thread at no cost: switches go there.
#pragma once

#include <string>

namespace ramiel {

// Once per process, before any executor runs: libtorch's default for threads
// that have not chosen (1).
void initIntraOpThreads();

// This thread's intra-op threads from now on (n >= 1).
void useIntraOpThreads(int n);
int currentIntraOpThreads();

// The file name of the OpenMP runtime this library's OpenMP calls reach ("libomp.so.5"
// where the program named LLVM's ahead of libgomp, as Ramiel's programs do).
std::string openMpLibrary();

// Sets this thread's intra-op threads for a scope.
class IntraOpThreadsScope {
public:
    explicit IntraOpThreadsScope(int n) : previous_(currentIntraOpThreads()) { useIntraOpThreads(n); }
    ~IntraOpThreadsScope() { useIntraOpThreads(previous_); }
    IntraOpThreadsScope(const IntraOpThreadsScope&) = delete;
    IntraOpThreadsScope& operator=(const IntraOpThreadsScope&) = delete;

private:
    int previous_;
};

}  // namespace ramiel
