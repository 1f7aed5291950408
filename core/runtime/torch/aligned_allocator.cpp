#include "core/runtime/torch/aligned_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace ramiel {

namespace {

constexpr uintptr_t kAlignment = 64;  // libtorch's (c10::gAlignment): AVX-512 rows

// The block malloc returned is kept just before the aligned data (malloc aligns
// to 16, so there are 16 to 64 bytes in front of it), and the data pointer is
// its own context, as libtorch's raw_allocate requires.
class AlignedAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(size_t n) const override
    {
        if (n == 0)
            return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
        void* raw = n <= SIZE_MAX - kAlignment ? std::malloc(n + kAlignment) : nullptr;
        TORCH_CHECK(raw, "can't allocate memory: you tried to allocate ", n, " bytes.");  // as libtorch says it
        const uintptr_t data = (reinterpret_cast<uintptr_t>(raw) + 16 + kAlignment - 1) & ~uintptr_t(kAlignment - 1);
        reinterpret_cast<void**>(data)[-1] = raw;
        return {reinterpret_cast<void*>(data), reinterpret_cast<void*>(data), &release,
                c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &release; }

private:
    static void release(void* data)
    {
        if (data)
            std::free(static_cast<void**>(data)[-1]);
    }
};

}  // namespace

void installAlignedAllocator()
{
    static std::once_flag once;
    std::call_once(once, [] { c10::SetCPUAllocator(new AlignedAllocator, 1); });  // outlives every tensor
}

}  // namespace ramiel
