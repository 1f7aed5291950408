// The libtorch implementation of ramiel::Runtime and the library's entry point.
#include "core/runtime/runtime.h"
#include "core/runtime/torch/aligned_allocator.h"
#include "core/runtime/torch/calibration.h"
#include "core/runtime/torch/compiled_model.h"
#include "core/runtime/torch/intra_op_threads.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/torch_errors.h"

#include <torch/version.h>

#include <malloc.h>

namespace ramiel {

namespace {

class TorchRuntime final : public Runtime {
public:
    TorchRuntime()
    {
        // Keep freed activations in the heap for the next run instead of
        // returning them to the system: otherwise glibc maps and unmaps each
        // large tensor on every run, and two workers page-faulting at once
        // contend in the kernel (squeezenet1_0 on 2 workers: 45-52 ms, 36 ms with this).
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        // One heap for every thread. Each worker thread otherwise gets an arena of
        // 64 MB heaps, which glibc unmaps as soon as one empties, whatever the trim
        // threshold. Set before any other thread of ours first allocates.
        mallopt(M_ARENA_MAX, 1);
        // Freed tensors' chunks fit the next tensor of their size (aligned_allocator.h).
        // Both: squeezenet1_0 at batch 4 on two workers measured 24-31 ms in two
        // processes of four (4-6x the page faults), 19-20 ms in every one with them.
        installAlignedAllocator();
        initIntraOpThreads();
        installTorchWarningHandler();
    }
    std::string description() const override
    {
        return std::string("libtorch ") + TORCH_VERSION + ", OpenMP " + openMpLibrary();
    }
    CalibrationDetail calibrate() override { return calibrateWithATen(); }
    std::vector<std::string> supportedOperators() const override
    {
        std::vector<std::string> ops;
        for (const auto& [name, factory] : kernelRegistry())
            if (name.find(':') == std::string::npos)  // "domain:Op" entries are Ramiel's own operators
                ops.push_back(name);
        return ops;
    }
    std::unique_ptr<CompiledModel> compile(const Model& model) override
    {
        try {
            return std::make_unique<TorchCompiledModel>(model);
        } catch (...) {
            rethrowAsError(ErrorKind::Internal, model.path, {});  // one line; allocation failures are Resource
        }
    }
};

}  // namespace

}  // namespace ramiel

extern "C" __attribute__((visibility("default"))) ramiel::Runtime* ramiel_create_runtime()
{
    return new ramiel::TorchRuntime();
}
