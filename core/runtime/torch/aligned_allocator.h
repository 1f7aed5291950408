// libtorch's CPU allocator for the runtime: malloc with 64 bytes to spare,
// aligned by hand, instead of libtorch's posix_memalign. glibc's memalign asks
// its heap for the size plus the alignment plus a minimum chunk, so the chunk a
// freed tensor leaves is a little too small for the next tensor of the same
// size. Where two workers interleave their allocations, freed chunks stayed
// islands that no request fit, and the heap grew by tensors' sizes on every
// run, each new page faulted in (two workers on 16 MB tensors: 3000-4000 page
// faults a run). A chunk malloc returns is reused by the next request of its size.
#pragma once

namespace ramiel {

// Makes it libtorch's CPU allocator; once per process, before tensors are made.
void installAlignedAllocator();

// While one is alive on a thread, the blocks that thread asked for and frees stay
// with it (the newest 64, at most 256 MiB) and its next allocations of the same
// sizes take them back, newest first; a block another thread asked for goes back
// to the heap as before. For the workers of a parallel run: in the one heap they
// share, a block one worker freed went to the other, whose first writes then
// fetched every line from the other core's cache (GoogLeNet at batch 4 on two
// workers, each its own copy of the graph: 0.86-0.91x of the best serial
// configuration, 1.06-1.09x with this; docs/runtime.md). A serial run does
// without: glibc's reuse of freed memory of any size keeps its working set
// smaller (MnasNet on one thread ran 2-18 % slower with the blocks kept).
class FreedBlocksKept {
public:
    FreedBlocksKept();
    ~FreedBlocksKept();
    FreedBlocksKept(const FreedBlocksKept&) = delete;
    FreedBlocksKept& operator=(const FreedBlocksKept&) = delete;
};

// Frees the calling thread's kept blocks (a thread's own go when it ends).
void releaseKeptBlocks();

}  // namespace ramiel
