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

}  // namespace ramiel
