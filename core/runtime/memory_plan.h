// Where the blocks of a recorded run go in one buffer that every later run reuses:
// the allocation pattern a worker replays (core/runtime/torch/aligned_allocator.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ramiel {

// A block of a recorded run: its size and the events (allocations and frees,
// numbered in the order they happened) at which it was made and freed.
struct BlockLifetime {
    size_t bytes = 0;
    uint64_t allocated = 0;
    uint64_t freed = 0;  // after `allocated`
};

struct MemoryPlan {
    std::vector<size_t> offsets;  // per block, multiples of the alignment
    size_t bytes = 0;             // the buffer: the end of the highest block
};

// The recorded run replayed on one buffer the way glibc's heap serves it: in event
// order, a block takes a free range of exactly its size freed last, else the
// smallest free range that fits it, else the top; a freed range merges with free
// neighbours. So blocks alive at the same time never share a byte, and a block is
// mostly written where one freed shortly before lay, still in the core's cache
// (packed largest block first instead, GoogLeNet and SqueezeNet ran 9-13 % slower on
// one thread; docs/runtime.md). Sizes are rounded up to `alignment` (a power of two).
MemoryPlan planMemory(const std::vector<BlockLifetime>& blocks, size_t alignment);

// For each block, the other blocks whose bytes overlap its own in `plan`: those
// that must have been freed before it is handed out again.
std::vector<std::vector<uint32_t>> overlappingBlocks(const std::vector<BlockLifetime>& blocks,
                                                     const MemoryPlan& plan, size_t alignment);

}  // namespace ramiel
