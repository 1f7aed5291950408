#include "core/runtime/torch/aligned_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace ramiel {

namespace {

constexpr uintptr_t kAlignment = 64;  // libtorch's (c10::gAlignment): AVX-512 rows

// Blocks kept (FreedBlocksKept): the newest 64, at most 256 MiB; none under a page
// (glibc's bins serve those cheaply) or over its mmap threshold (torch_runtime.cpp).
constexpr size_t kKeptBlocks = 64;
constexpr size_t kKeptBytes = size_t(256) << 20;
constexpr size_t kSmallestKept = 4096, kLargestKept = size_t(32) << 20;

// In front of the aligned data (32 to 80 bytes after what malloc returned, which
// is aligned to 16): the block malloc returned, the size asked for, and the
// blocks of the thread that asked (FreedBlocksKept). The data pointer is its own
// context, as libtorch's raw_allocate requires.
constexpr size_t kHeader = 32;
struct KeptBlocks;
void*& rawOf(void* data) { return static_cast<void**>(data)[-1]; }
size_t& sizeOf(void* data) { return static_cast<size_t*>(data)[-2]; }
KeptBlocks*& ownerOf(void* data) { return static_cast<KeptBlocks**>(data)[-3]; }

struct KeptBlocks {
    std::vector<void*> blocks;  // data pointers, oldest first
    size_t bytes = 0;
    int scopes = 0;  // FreedBlocksKept alive on this thread

    void clear()
    {
        for (void* data : blocks)
            std::free(rawOf(data));
        blocks.clear();
        bytes = 0;
    }
    ~KeptBlocks() { clear(); }
};
thread_local KeptBlocks kept;

class AlignedAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(size_t n) const override
    {
        if (n == 0)
            return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
        void* data = kept.scopes > 0 ? takeKept(n) : nullptr;
        if (!data) {
            void* raw = n <= SIZE_MAX - kHeader - kAlignment ? std::malloc(n + kHeader + kAlignment) : nullptr;
            TORCH_CHECK(raw, "can't allocate memory: you tried to allocate ", n, " bytes.");  // as libtorch says it
            data = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + kHeader + kAlignment - 1) &
                                           ~uintptr_t(kAlignment - 1));
            rawOf(data) = raw;
            sizeOf(data) = n;
        }
        ownerOf(data) = &kept;
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &release; }

private:
    static void* takeKept(size_t n)
    {
        for (size_t i = kept.blocks.size(); i-- > 0;)
            if (sizeOf(kept.blocks[i]) == n) {
                void* data = kept.blocks[i];
                kept.blocks.erase(kept.blocks.begin() + std::ptrdiff_t(i));
                kept.bytes -= n;
                return data;
            }
        return nullptr;
    }

    static void release(void* data)
    {
        if (!data)
            return;
        // Only a block the thread itself asked for: one freed by another thread would leave
        // its maker short every run, and collect with the reader, one block a run.
        const size_t n = sizeOf(data);
        if (kept.scopes == 0 || ownerOf(data) != &kept || n < kSmallestKept || n > kLargestKept) {
            std::free(rawOf(data));
            return;
        }
        kept.blocks.push_back(data);
        kept.bytes += n;
        while (kept.blocks.size() > kKeptBlocks || kept.bytes > kKeptBytes) {
            void* oldest = kept.blocks.front();
            kept.blocks.erase(kept.blocks.begin());
            kept.bytes -= sizeOf(oldest);
            std::free(rawOf(oldest));
        }
    }
};

}  // namespace

FreedBlocksKept::FreedBlocksKept() { ++kept.scopes; }
FreedBlocksKept::~FreedBlocksKept() { --kept.scopes; }

void releaseKeptBlocks() { kept.clear(); }

void installAlignedAllocator()
{
    static std::once_flag once;
    std::call_once(once, [] { c10::SetCPUAllocator(new AlignedAllocator, 1); });  // outlives every tensor
}

}  // namespace ramiel
