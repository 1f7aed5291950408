// Costs measured by running the compiled model, for plans that use them
// (ramiel bench). The runtime is reached through core/runtime/runtime.h.
#pragma once

#include "core/pipeline/pipeline.h"
#include "core/runtime/runtime.h"

namespace ramiel::pipeline {

// Per-node medians of serial runs at the largest sub-batch the settings'
// copies run, on one thread and, for the hybrid, on P threads (d = 1 only).
Costs measureCosts(const PreparedModel& prepared, const PlanSettings& settings, CompiledModel& compiled,
                   int runs = 10);

// The same costs with each node re-measured where `executor` (running
// `schedule`) runs it, beside the other workers (they contend for caches and
// memory), and kept as its cost on the thread count it runs with there.
// The model's inputs must be set for `batch` samples.
Costs measureInContext(const PreparedModel& prepared, const Costs& alone, Executor& executor,
                       const Schedule& schedule, int batch, int runs = 15);

// The planned schedule simulated with other costs.
Simulation simulateWith(const PlannedModel& planned, const Costs& costs);

}  // namespace ramiel::pipeline
