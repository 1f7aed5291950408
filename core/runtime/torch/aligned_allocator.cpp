#include "core/runtime/torch/aligned_allocator.h"

#include "core/runtime/memory_plan.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <vector>

namespace ramiel {

namespace {

constexpr uintptr_t kAlignment = 64;  // libtorch's (c10::gAlignment): AVX-512 rows
constexpr size_t kSmallestPlanned = 4096;  // smaller ones: glibc's per-thread caches serve them cheaply
constexpr size_t kLargestPlan = size_t(8) << 30;  // a pattern needing more is not replayed
constexpr int kRecordings = 6;  // then the worker allocates from the heap for good
constexpr uint64_t kNotFreed = std::numeric_limits<uint64_t>::max();

struct Recording;
struct Plan;

// In front of the aligned data: the block malloc returned (null for a block of a
// plan's buffer) and where the block is tracked: the recording or the plan it
// belongs to (null for neither) and its index there.
struct Header {
    void* raw;
    void* tracker;
    size_t index;
};
static_assert(sizeof(Header) <= kAlignment);
Header& headerOf(void* data) { return static_cast<Header*>(data)[-1]; }

// Shared by the worker and the blocks it handed out, which may outlive it.
template <typename T>
struct Counted {
    std::atomic<long> refs{1};
    void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
    void release()
    {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
            delete static_cast<T*>(this);
    }
};

// One run's blocks in the order the worker's thread asked for them; frees come from any thread.
struct Recording : Counted<Recording> {
    std::mutex m;
    std::vector<BlockLifetime> blocks;
    uint64_t events = 0;
    bool closed = false;  // planned: later frees are not recorded

    size_t allocated(size_t bytes)
    {
        std::lock_guard<std::mutex> lock(m);
        blocks.push_back({bytes, events++, kNotFreed});
        return blocks.size() - 1;
    }
    void freed(size_t index)
    {
        std::lock_guard<std::mutex> lock(m);
        if (!closed)
            blocks[index].freed = events++;
    }
};

// A recording's places in one buffer. Block i is planned when its offset is not
// kUnplanned; it is handed out when neither it nor a block sharing its bytes is in use.
struct Plan : Counted<Plan> {
    static constexpr size_t kUnplanned = std::numeric_limits<size_t>::max();
    std::vector<size_t> sizes, offsets;
    std::vector<std::vector<uint32_t>> overlapping;
    std::unique_ptr<std::atomic<bool>[]> inUse;
    char* buffer = nullptr;

    ~Plan() { std::free(buffer); }

    void* take(size_t index, size_t size)
    {
        if (index >= sizes.size() || sizes[index] != size || offsets[index] == kUnplanned)
            return nullptr;
        if (inUse[index].load(std::memory_order_acquire))
            return nullptr;
        for (uint32_t other : overlapping[index])
            if (inUse[other].load(std::memory_order_acquire))
                return nullptr;
        inUse[index].store(true, std::memory_order_relaxed);
        retain();
        return buffer + offsets[index] + kAlignment;
    }
};

// A block's room in a plan: its header's alignment unit and its data.
size_t planned(size_t size) { return kAlignment + size; }

Plan* makePlan(Recording& r)
{
    std::vector<BlockLifetime> blocks;
    std::vector<size_t> index;  // recorded block of each planned one
    {
        std::lock_guard<std::mutex> lock(r.m);
        r.closed = true;
        for (size_t i = 0; i < r.blocks.size(); ++i)
            if (r.blocks[i].freed != kNotFreed) {  // the others outlive runs: results, kernels' caches
                blocks.push_back({planned(r.blocks[i].bytes), r.blocks[i].allocated, r.blocks[i].freed});
                index.push_back(i);
            }
    }
    if (blocks.empty())
        return nullptr;
    const MemoryPlan layout = planMemory(blocks, kAlignment);
    if (layout.bytes > kLargestPlan)
        return nullptr;
    constexpr size_t kHugePage = size_t(2) << 20;
    const size_t bytes = (layout.bytes + kHugePage - 1) & ~(kHugePage - 1);
    void* buffer = std::aligned_alloc(kHugePage, bytes);
    if (!buffer)
        return nullptr;  // the heap serves the worker as before
    madvise(buffer, bytes, MADV_HUGEPAGE);
    auto* plan = new Plan;
    plan->buffer = static_cast<char*>(buffer);
    plan->sizes.assign(r.blocks.size(), 0);
    plan->offsets.assign(r.blocks.size(), Plan::kUnplanned);
    for (size_t i = 0; i < r.blocks.size(); ++i)
        plan->sizes[i] = r.blocks[i].bytes;
    std::vector<std::vector<uint32_t>> overlapping = overlappingBlocks(blocks, layout, kAlignment);
    plan->overlapping.resize(r.blocks.size());
    for (size_t k = 0; k < blocks.size(); ++k) {
        plan->offsets[index[k]] = layout.offsets[k];
        for (uint32_t& other : overlapping[k])
            other = uint32_t(index[other]);
        plan->overlapping[index[k]] = std::move(overlapping[k]);
    }
    plan->inUse = std::make_unique<std::atomic<bool>[]>(r.blocks.size());
    for (size_t i = 0; i < r.blocks.size(); ++i)
        plan->inUse[i].store(false, std::memory_order_relaxed);
    return plan;
}

}  // namespace

// A worker's pattern: what its thread is doing this run and the plan it replays.
struct PatternState {
    enum class Mode { Record, Replay, Heap } mode = Mode::Record;
    Recording* recording = nullptr;
    Plan* plan = nullptr;
    size_t next = 0;  // requests of this run so far
    bool diverged = false;  // a request differed from the plan
    int recordings = 0;

    ~PatternState() { drop(); }

    void drop()
    {
        if (recording)
            recording->release();
        if (plan)
            plan->release();
        recording = nullptr;
        plan = nullptr;
    }

    // Settles the mode for a run: the last run's recording (its frees all in by now) is
    // planned, a replay that diverged records again.
    void beginRun()
    {
        if (mode == Mode::Record && recording) {
            plan = makePlan(*recording);
            recording->release();
            recording = nullptr;
            mode = plan ? Mode::Replay : Mode::Heap;
        } else if (mode == Mode::Replay && diverged) {
            drop();
            mode = Mode::Record;
        }
        if (mode == Mode::Record) {
            if (recordings++ == kRecordings) {
                mode = Mode::Heap;
            } else {
                recording = new Recording;
            }
        }
        next = 0;
        diverged = false;
    }
};

namespace {

thread_local PatternState* active = nullptr;

void* fromHeap(size_t n)
{
    void* raw = n <= SIZE_MAX - sizeof(Header) - kAlignment ? std::malloc(n + sizeof(Header) + kAlignment) : nullptr;
    TORCH_CHECK(raw, "can't allocate memory: you tried to allocate ", n, " bytes.");  // as libtorch says it
    void* data = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + sizeof(Header) + kAlignment - 1) &
                                         ~uintptr_t(kAlignment - 1));
    headerOf(data) = {raw, nullptr, 0};
    return data;
}

class AlignedAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(size_t n) const override
    {
        if (n == 0)
            return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
        PatternState* s = active;
        if (!s || n < kSmallestPlanned || s->mode == PatternState::Mode::Heap) {
            void* data = fromHeap(n);
            return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
        }
        const size_t index = s->next++;
        if (s->mode == PatternState::Mode::Replay) {
            if (void* data = s->plan->take(index, n)) {
                headerOf(data) = {nullptr, s->plan, index};
                return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
            }
            if (index >= s->plan->sizes.size() || s->plan->sizes[index] != n)
                s->diverged = true;
            void* data = fromHeap(n);
            return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
        }
        void* data = fromHeap(n);
        Header& h = headerOf(data);
        h.tracker = s->recording;
        h.index = s->recording->allocated(n);
        s->recording->retain();
        return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &release; }

private:
    static void release(void* data)
    {
        if (!data)
            return;
        const Header h = headerOf(data);
        if (!h.raw) {  // a plan's block: its place is free again
            auto* plan = static_cast<Plan*>(h.tracker);
            plan->inUse[h.index].store(false, std::memory_order_release);
            plan->release();
            return;
        }
        if (h.tracker) {
            auto* recording = static_cast<Recording*>(h.tracker);
            recording->freed(h.index);
            recording->release();
        }
        std::free(h.raw);
    }
};

}  // namespace

AllocationPattern::AllocationPattern() : state_(std::make_unique<PatternState>()) {}
AllocationPattern::~AllocationPattern() = default;

AllocationPattern::Run::Run(AllocationPattern& pattern, bool settled) : previous_(active)
{
    active = nullptr;
    if (settled) {
        pattern.state_->beginRun();
        active = pattern.state_.get();
    }
}

AllocationPattern::Run::~Run() { active = previous_; }

void installAlignedAllocator()
{
    static std::once_flag once;
    std::call_once(once, [] { c10::SetCPUAllocator(new AlignedAllocator, 1); });  // outlives every tensor
}

}  // namespace ramiel
