// The runtime's interface, free of torch types. Its implementation lives in
// libramiel_runtime.so (core/runtime/torch/), which links libtorch; loading
// libtorch costs about a second, so the library is opened only when something
// first needs it, and tools that only analyse graphs start instantly.
#pragma once

#include "core/analysis/machine.h"
#include "core/ir/model.h"
#include "core/schedule/schedule.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ramiel {

// Timings of one run. Node times are by node id (summed over graph copies).
struct RunProfile {
    double totalSeconds = 0;
    std::vector<double> nodeSeconds;
    std::vector<double> workerBusy;  // per worker (one entry for serial runs)
    std::vector<double> workerWait;  // per worker: blocked on inputs from other workers
    // Serial runs: the intra-op threads each node ran with, by node id (on several
    // threads, the nodes measured faster on one run on one: node_threads.h).
    std::vector<int> nodeThreads;
    // Serial runs only, when recordTypes is set: the element type and sizes each
    // node output had, by value id (what constant folding learns shapes from).
    struct ValueType {
        DataType dtype = DataType::Undefined;
        std::vector<int64_t> dims;
    };
    bool recordTypes = false;
    std::vector<std::optional<ValueType>> valueTypes;
};

// Calls after which a kernel has made the choices it makes by timing its first
// calls (a convolution's Winograd or direct kernel, in turns).
constexpr int kKernelTrialCalls = 8;
// Runs after which an executor has made every choice it makes by timing: the
// kernels' first, then (serial runs on several threads) which nodes run on one
// thread, and whether all of them do; then the kernels of the nodes moved to one
// thread at the end settle there. Executor::settled() tells when, at most this many.
constexpr int kSettlingRuns = 3 * kKernelTrialCalls + kKernelTrialCalls / 2;

// Runs a compiled model on its current inputs; keeps its threads between runs.
class Executor {
public:
    virtual ~Executor() = default;
    // One run; returns its wall time in seconds. Throws Error naming the node
    // that failed (no other worker is left waiting).
    virtual double run(RunProfile* profile = nullptr) = 0;
    // Whether the choices made by timing the first runs are all made (after
    // kKernelTrialCalls runs, or up to kSettlingRuns where nodes are tried on fewer
    // threads): warm-ups run until then.
    virtual bool settled() const = 0;
};

// Untimed runs until the executor has settled, at most `atMost` (fewer for a quick look).
inline void warmUp(Executor& executor, int atMost = kSettlingRuns)
{
    for (int i = 0; i < atMost && !executor.settled(); ++i)
        executor.run();
}

// A model with its kernels chosen and its weights prepared.
class CompiledModel {
public:
    virtual ~CompiledModel() = default;

    // Inputs in the order of the graph's inputs (initializers excluded). The
    // first dimension may be a multiple of the model's (a batch of samples);
    // other known dimensions must match. Throws Error(Usage) naming the input.
    virtual void setInputs(const std::vector<Tensor>& inputs) = 0;
    // Seeded random inputs of the model's own shapes times `batch` samples.
    virtual std::vector<Tensor> randomInputs(int batch, uint64_t seed) const = 0;
    // The outputs of the last run, in graph-output order.
    virtual std::vector<Tensor> outputs() const = 0;

    // One thread running nodes in topological order, each with `intraOpThreads`.
    virtual std::unique_ptr<Executor> serialExecutor(int intraOpThreads) = 0;
    // A persistent worker per cluster, worker i starting each run with the
    // schedule's workerThreads[i] intra-op threads (1 where the list is short)
    // and switching for items with their own count. The schedule must pass
    // validate(); its batch must match the inputs'.
    virtual std::unique_ptr<Executor> parallelExecutor(const Schedule& schedule) = 0;
};

class Runtime {
public:
    virtual ~Runtime() = default;

    // "libtorch 1.13.1, OpenMP libomp.so.5" or similar: the kernel library and the OpenMP
    // runtime its calls reach.
    virtual std::string description() const = 0;

    // Measures the cost model's machine constants with libtorch's kernels,
    // single-threaded (a float GEMM, a large copy, a 1-element operator).
    virtual CalibrationDetail calibrate() = 0;

    // The ONNX operators (default domain) the runtime implements.
    virtual std::vector<std::string> supportedOperators() const = 0;

    // Chooses kernels and prepares weights. Throws Error(Unsupported) naming
    // every operator it lacks and a node using it, then Error(InvalidGraph)
    // for a node that breaks its operator's rules (validateNodes), before
    // anything runs.
    virtual std::unique_ptr<CompiledModel> compile(const Model& model) = 0;
};

// Loads the runtime library on first use. Looks for $RAMIEL_RUNTIME_LIBRARY,
// else libramiel_runtime.so next to libramiel_core.so. Throws
// Error(Unsupported) naming the library and the loader's message.
Runtime& runtime();

// Seconds that loading the runtime library (libtorch with it) took in this
// process: what every new process that runs a model pays first. 0 until loaded.
double runtimeLoadSeconds();

// The constants to use: the file given (--machine) if any; else the cache if
// it was measured on this CPU; else a fresh calibration, saved to the cache
// when the cache is writable.
MachineConstants obtainMachineConstants(const std::string& overridePath = {});

}  // namespace ramiel
