#include "core/runtime/memory_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ramiel {

namespace {

size_t roundUp(size_t n, size_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

bool aliveTogether(const BlockLifetime& a, const BlockLifetime& b)
{
    return a.allocated < b.freed && b.allocated < a.freed;
}

}  // namespace

MemoryPlan planMemory(const std::vector<BlockLifetime>& blocks, size_t alignment)
{
    MemoryPlan plan;
    plan.offsets.assign(blocks.size(), 0);
    std::vector<size_t> order(blocks.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
    std::vector<size_t> placed;
    std::vector<std::pair<size_t, size_t>> taken;  // [begin, end) of placed blocks alive with this one
    for (size_t b : order) {
        const size_t size = roundUp(blocks[b].bytes, alignment);
        taken.clear();
        for (size_t p : placed)
            if (aliveTogether(blocks[b], blocks[p]))
                taken.emplace_back(plan.offsets[p], plan.offsets[p] + roundUp(blocks[p].bytes, alignment));
        std::sort(taken.begin(), taken.end());
        size_t offset = 0;
        for (const auto& [begin, end] : taken) {
            if (begin >= offset + size)
                break;  // the gap before this one fits
            offset = std::max(offset, end);
        }
        plan.offsets[b] = offset;
        plan.bytes = std::max(plan.bytes, offset + size);
        placed.push_back(b);
    }
    return plan;
}

std::vector<std::vector<uint32_t>> overlappingBlocks(const std::vector<BlockLifetime>& blocks,
                                                     const MemoryPlan& plan, size_t alignment)
{
    std::vector<std::vector<uint32_t>> overlaps(blocks.size());
    for (size_t a = 0; a < blocks.size(); ++a)
        for (size_t b = a + 1; b < blocks.size(); ++b) {
            const size_t aEnd = plan.offsets[a] + roundUp(blocks[a].bytes, alignment);
            const size_t bEnd = plan.offsets[b] + roundUp(blocks[b].bytes, alignment);
            if (plan.offsets[a] < bEnd && plan.offsets[b] < aEnd) {
                overlaps[a].push_back(uint32_t(b));
                overlaps[b].push_back(uint32_t(a));
            }
        }
    return overlaps;
}

}  // namespace ramiel
