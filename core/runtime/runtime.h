// The runtime's interface, free of torch types. Its implementation lives in
// libramiel_runtime.so (core/runtime/torch/), which links libtorch; loading
// libtorch costs about a second, so the library is opened only when something
// first needs it, and tools that only analyse graphs start instantly.
#pragma once

#include "core/analysis/machine.h"

#include <string>

namespace ramiel {

class Runtime {
public:
    virtual ~Runtime() = default;

    // "libtorch 1.13.1" or similar.
    virtual std::string description() const = 0;

    // Measures the cost model's machine constants with libtorch's kernels,
    // single-threaded (a float GEMM, a large copy, a 1-element operator).
    virtual CalibrationDetail calibrate() = 0;
};

// Loads the runtime library on first use. Looks for $RAMIEL_RUNTIME_LIBRARY,
// else libramiel_runtime.so next to libramiel_core.so. Throws
// Error(Unsupported) naming the library and the loader's message.
Runtime& runtime();

// The constants to use: the file given (--machine) if any; else the cache if
// it was measured on this CPU; else a fresh calibration, saved to the cache
// when the cache is writable.
MachineConstants obtainMachineConstants(const std::string& overridePath = {});

}  // namespace ramiel
