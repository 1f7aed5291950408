// JSON for schedules (`ramiel cluster --json`, `ramiel compare --json`;
// schema in docs/json.md).
#pragma once

#include "core/schedule/scheduler.h"

#include <nlohmann/json.hpp>

namespace ramiel {

constexpr const char* kScheduleSchema = "ramiel.schedule/1";

nlohmann::json planToJson(const Graph& graph, const SchedulingProblem& problem, const Plan& plan, bool withGantt);

// What the hybrid pass did (threads, cuts, stretches, instances given more cores,
// what was skipped): the counts both the schedule's and bench's JSON carry; each
// adds the simulated makespans before and after in its own schema's unit.
nlohmann::json hybridReportToJson(const HybridReport& report);

// One row of a comparison: the headline figures of a plan.
nlohmann::json planSummaryJson(const Plan& plan);

}  // namespace ramiel
