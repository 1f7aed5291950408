#include "core/runtime/memory_plan.h"

#include <algorithm>
#include <iterator>
#include <map>

namespace ramiel {

namespace {

size_t roundUp(size_t n, size_t alignment) { return (n + alignment - 1) & ~(alignment - 1); }

}  // namespace

MemoryPlan planMemory(const std::vector<BlockLifetime>& blocks, size_t alignment)
{
    struct Event {
        uint64_t time;
        bool alloc;
        size_t block;
    };
    std::vector<Event> events;
    for (size_t b = 0; b < blocks.size(); ++b) {
        events.push_back({blocks[b].allocated, true, b});
        events.push_back({blocks[b].freed, false, b});
    }
    // At one time a free comes before an allocation: the allocation may take its bytes.
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return a.time != b.time ? a.time < b.time : (!a.alloc && b.alloc);
    });
    struct Range {
        size_t size;
        uint64_t freedAt;
    };
    std::map<size_t, Range> free;  // by offset, merged with free neighbours
    MemoryPlan plan;
    plan.offsets.assign(blocks.size(), 0);
    for (const Event& e : events) {
        const size_t size = roundUp(blocks[e.block].bytes, alignment);
        if (!e.alloc) {
            size_t begin = plan.offsets[e.block], end = begin + size;
            uint64_t freedAt = e.time;
            auto next = free.lower_bound(begin);
            if (next != free.end() && next->first == end) {
                end += next->second.size;
                freedAt = std::max(freedAt, next->second.freedAt);
                next = free.erase(next);
            }
            if (next != free.begin()) {
                auto prev = std::prev(next);
                if (prev->first + prev->second.size == begin) {
                    begin = prev->first;
                    freedAt = std::max(freedAt, prev->second.freedAt);
                    free.erase(prev);
                }
            }
            free[begin] = {end - begin, freedAt};
            continue;
        }
        // An exact fit freed last, else the smallest range that fits (freed last among equals).
        auto better = [&](const Range& a, const Range& b) {
            if ((a.size == size) != (b.size == size))
                return a.size == size;
            return a.size != b.size ? a.size < b.size : a.freedAt > b.freedAt;
        };
        auto best = free.end();
        for (auto f = free.begin(); f != free.end(); ++f)
            if (f->second.size >= size && (best == free.end() || better(f->second, best->second)))
                best = f;
        if (best == free.end()) {  // on top, taking a free range that ends there
            size_t offset = plan.bytes;
            if (!free.empty()) {
                auto last = std::prev(free.end());
                if (last->first + last->second.size == plan.bytes) {
                    offset = last->first;
                    free.erase(last);
                }
            }
            plan.offsets[e.block] = offset;
            plan.bytes = offset + size;
            continue;
        }
        plan.offsets[e.block] = best->first;
        const Range rest{best->second.size - size, best->second.freedAt};
        const size_t restAt = best->first + size;
        free.erase(best);
        if (rest.size > 0)
            free[restAt] = rest;
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
