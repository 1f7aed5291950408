// A schedule as JSON and back, field for field, so that another process can
// run exactly the schedule this one planned (ramiel bench times each
// configuration in its own process). Not a report: see core/report for those.
#pragma once

#include "core/schedule/schedule.h"

#include <nlohmann/json.hpp>

namespace ramiel {

nlohmann::json scheduleToJson(const Schedule& s);
// Throws Error(Usage) when the document is not a schedule.
Schedule scheduleFromJson(const nlohmann::json& j);
// Throws Error(Usage) when `s` is not a schedule of `topo` (sizes, instances,
// thread counts); check it with validate() too before running it.
void checkScheduleFits(const Schedule& s, const Topology& topo);
// Both.
Schedule scheduleFromJson(const nlohmann::json& j, const Topology& topo);

}  // namespace ramiel
