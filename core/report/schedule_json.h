// JSON for schedules (`ramiel cluster --json`, `ramiel compare --json`;
// schema in docs/json.md).
#pragma once

#include "core/schedule/scheduler.h"

#include <nlohmann/json.hpp>

namespace ramiel {

constexpr const char* kScheduleSchema = "ramiel.schedule/1";

nlohmann::json planToJson(const Graph& graph, const SchedulingProblem& problem, const Plan& plan, bool withGantt);

// One row of a comparison: the headline figures of a plan.
nlohmann::json planSummaryJson(const Plan& plan);

}  // namespace ramiel
