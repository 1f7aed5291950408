// What the runtime's oneDNN primitives share (convolutions, matmuls): the engine, weights
// reordered once into a primitive's layout, and each calling thread's arguments.
#pragma once

#if RAMIEL_HAVE_DNNL
#include <ATen/ATen.h>
#include <dnnl.hpp>

#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ramiel {

// The CPU engine every primitive of the runtime is made for.
inline const dnnl::engine& dnnlEngine()
{
    static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

// Constant weights (laid out as `plain` says) reordered once into the layout a
// primitive picked: the buffer, which the caller keeps, and the memory over it.
inline std::pair<at::Tensor, dnnl::memory> reorderedWeights(const dnnl::memory::desc& packed, const dnnl::memory::desc& plain,
                                                            const at::Tensor& weights)
{
    at::Tensor buffer = at::empty({int64_t(packed.get_size())}, weights.options().dtype(at::kByte));
    dnnl::memory to(packed, dnnlEngine(), buffer.data_ptr()), from(plain, dnnlEngine(), weights.data_ptr());
    dnnl::stream stream(dnnlEngine());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    return {buffer, to};
}

// The arguments a prepared convolution or matmul runs with, one set per calling
// thread (copies of a node on several workers may run it at once): memory
// objects over source and destination, pointed at each run's tensors, the
// weights (and bias) the primitive keeps, and a scratchpad of the thread's own.
// Made on a thread's first run and kept (the scratchpads of a model's primitives
// come to 0.1-2 MB a thread): making the memory objects, the map, the stream and
// a scratchpad on every run cost about 1.7 us a node (100 small convolutions
// 0.53 -> 0.36 ms; MnasNet on two threads 2.83 -> 2.65 ms).
class ThreadArguments {
public:
    template <typename PrimitiveDesc>
    void execute(const dnnl::primitive& primitive, const PrimitiveDesc& pd, const at::Tensor& src, at::Tensor& dst,
                 const dnnl::memory& weights, const dnnl::memory* bias) const
    {
        execute(primitive, pd, src.data_ptr(), dst.data_ptr(), weights, bias);
    }

    template <typename PrimitiveDesc>
    void execute(const dnnl::primitive& primitive, const PrimitiveDesc& pd, const void* src, void* dst,
                 const dnnl::memory& weights, const dnnl::memory* bias) const
    {
        run(primitive, *forThisThread(pd, &weights, bias), src, dst);
    }

    // The weights given on each run too (a product of two activations): each thread
    // a memory object of its own over them.
    template <typename PrimitiveDesc>
    void execute(const dnnl::primitive& primitive, const PrimitiveDesc& pd, const void* src, const void* weights,
                 void* dst) const
    {
        const std::shared_ptr<Arguments> a = forThisThread(pd, nullptr, nullptr);
        a->weights.set_data_handle(const_cast<void*>(weights));
        run(primitive, *a, src, dst);
    }

private:
    struct Arguments {
        dnnl::memory src, dst, weights;  // weights: only where each run gives them
        at::Tensor scratchpad;
        std::unordered_map<int, dnnl::memory> map;
    };

    static void run(const dnnl::primitive& primitive, Arguments& a, const void* src, void* dst)
    {
        a.src.set_data_handle(const_cast<void*>(src));
        a.dst.set_data_handle(dst);
        thread_local dnnl::stream stream(dnnlEngine());
        primitive.execute(stream, a.map);
        stream.wait();
    }

    // Threads come and go (Studio runs each configuration on workers of its own): past
    // kMaxThreads the oldest set goes, a thread still holding it keeps it for that run.
    static constexpr size_t kMaxThreads = 64;

    // weights: the primitive's own, or null where each run gives them.
    template <typename PrimitiveDesc>
    std::shared_ptr<Arguments> forThisThread(const PrimitiveDesc& pd, const dnnl::memory* weights,
                                             const dnnl::memory* bias) const
    {
        const std::thread::id self = std::this_thread::get_id();
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& [thread, a] : byThread_)
            if (thread == self)
                return a;
        auto a = std::make_shared<Arguments>();
        const dnnl::engine& eng = dnnlEngine();
        a->src = dnnl::memory(pd.src_desc(), eng, DNNL_MEMORY_NONE);
        a->dst = dnnl::memory(pd.dst_desc(), eng, DNNL_MEMORY_NONE);
        if (!weights)
            a->weights = dnnl::memory(pd.weights_desc(), eng, DNNL_MEMORY_NONE);
        a->map = {{DNNL_ARG_SRC, a->src}, {DNNL_ARG_WEIGHTS, weights ? *weights : a->weights}, {DNNL_ARG_DST, a->dst}};
        if (bias)
            a->map.emplace(DNNL_ARG_BIAS, *bias);
        const dnnl::memory::desc scratchDesc = pd.scratchpad_desc();
        if (scratchDesc.get_size() > 0) {
            a->scratchpad = at::empty({int64_t(scratchDesc.get_size())}, at::TensorOptions().dtype(at::kByte));
            a->map.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchDesc, eng, a->scratchpad.data_ptr()));
        }
        if (byThread_.size() >= kMaxThreads)
            byThread_.erase(byThread_.begin());
        byThread_.emplace_back(self, a);
        return a;
    }

    mutable std::mutex mutex_;
    mutable std::vector<std::pair<std::thread::id, std::shared_ptr<Arguments>>> byThread_;
};

}  // namespace ramiel
#endif
