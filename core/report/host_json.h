// A HostState as JSON, for the reports of commands that time runs (docs/cli.md):
// {"cpus": 2, "load_average": 0.55, "round_trip_ns": 66.0, "round_trip_cpus": [0, 1]},
// null where not known (one CPU: no round trip).
#pragma once

#include "core/analysis/host_state.h"

#include <nlohmann/json.hpp>

namespace ramiel {

nlohmann::json hostStateToJson(const HostState& h);

}  // namespace ramiel
