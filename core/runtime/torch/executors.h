// The serial and parallel executors of a TorchCompiledModel.
#pragma once

#include "core/runtime/runtime.h"

#include <memory>

namespace ramiel {

class TorchCompiledModel;

std::unique_ptr<Executor> makeSerialExecutor(TorchCompiledModel& model, int intraOpThreads);
std::unique_ptr<Executor> makeParallelExecutor(TorchCompiledModel& model, const Schedule& schedule);

}  // namespace ramiel
