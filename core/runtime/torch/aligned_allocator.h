// libtorch's CPU allocator for the runtime: malloc with room for a header, aligned
// by hand, instead of libtorch's posix_memalign. glibc's memalign asks its heap for
// the size plus the alignment plus a minimum chunk, so the chunk a freed tensor
// leaves is a little too small for the next tensor of the same size. Where two
// workers interleave their allocations, freed chunks stayed islands that no request
// fit, and the heap grew by tensors' sizes on every run, each new page faulted in
// (two workers on 16 MB tensors: 3000-4000 page faults a run). A chunk malloc
// returns is reused by the next request of its size.
#pragma once

#include <memory>

namespace ramiel {

// Makes it libtorch's CPU allocator; once per process, before tensors are made.
void installAlignedAllocator();

struct PatternState;

// A worker's allocation pattern, recorded in one run and replayed in the next ones
// (as ONNX Runtime's memory pattern): the blocks of a page or more that its thread
// asks for during a run, and frees (on any thread) before the next run starts, get
// places in one buffer of the worker's own (core/runtime/memory_plan.h), the same
// places every run, blocks alive at different times sharing bytes. A run whose
// requests differ from the recording (a kernel's trial choosing another kernel) gets
// recorded again, a few times at most; a block whose place is still held (it lives
// longer this run) comes from the heap. In the heap that all threads share, a block
// one worker freed went to the other, whose first writes then fetched every line
// from the other core's cache, and the heap's lock and lists went back and forth:
// two copies of MobileNetV2 on two workers each ran 4-16 % slower than alone, and
// 0-5 % slower as two processes (docs/runtime.md).
class AllocationPattern {
public:
    AllocationPattern();
    ~AllocationPattern();
    AllocationPattern(const AllocationPattern&) = delete;
    AllocationPattern& operator=(const AllocationPattern&) = delete;

    // One run of the worker on the calling thread: while it is alive, that thread's
    // allocations are recorded or served from the plan. Until the executor has settled
    // (its kernels' and threads' trials change the requests from run to run), they come
    // from the heap.
    class Run {
    public:
        Run(AllocationPattern& pattern, bool settled);
        ~Run();
        Run(const Run&) = delete;
        Run& operator=(const Run&) = delete;

    private:
        PatternState* previous_;
    };

private:
    std::unique_ptr<PatternState> state_;
};

}  // namespace ramiel
