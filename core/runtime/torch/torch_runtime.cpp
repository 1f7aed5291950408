// The libtorch implementation of ramiel::Runtime and the library's entry point.
#include "core/runtime/runtime.h"
#include "core/runtime/torch/calibration.h"

#include <ATen/Parallel.h>
#include <torch/version.h>

namespace ramiel {

namespace {

class TorchRuntime final : public Runtime {
public:
    std::string description() const override { return std::string("libtorch ") + TORCH_VERSION; }
    CalibrationDetail calibrate() override { return calibrateWithATen(); }
};

}  // namespace

}  // namespace ramiel

extern "C" __attribute__((visibility("default"))) ramiel::Runtime* ramiel_create_runtime()
{
    return new ramiel::TorchRuntime();
}
