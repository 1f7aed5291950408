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

// Largest block first, each at the lowest offset that no block alive at the same
// time (lifetimes overlapping) already covers; blocks of disjoint lifetimes share
// bytes. Offsets and sizes are rounded up to `alignment` (a power of two).
MemoryPlan planMemory(const std::vector<BlockLifetime>& blocks, size_t alignment);

// For each block, the other blocks whose bytes overlap its own in `plan`: those
// that must have been freed before it is handed out again.
std::vector<std::vector<uint32_t>> overlappingBlocks(const std::vector<BlockLifetime>& blocks,
                                                     const MemoryPlan& plan, size_t alignment);

}  // namespace ramiel
