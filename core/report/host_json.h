// The host's state as JSON, for the reports of commands that time runs (docs/cli.md):
// {"cpus": 2, "load_average": 0.55, "round_trip_ns": 66.0, "round_trip_cpus": [0, 1],
//  "cpu_seconds": 7312.4, "stolen_seconds": 30.8} (the last two since boot), null where not
// known (one CPU: no round trip).
#pragma once

#include "core/analysis/host_state.h"

#include <nlohmann/json.hpp>

namespace ramiel {

nlohmann::json hostStateToJson(const HostState& h);

// Around a timing: {"before": {...}, "after": {...}, "stolen_share": 0.004 | null}.
nlohmann::json hostAroundToJson(const HostState& before, const HostState& after);

}  // namespace ramiel
