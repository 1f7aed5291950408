// The host's state as the reports of commands that time runs give it (docs/cli.md),
// one wording for the CLI and Studio.
#pragma once

#include "core/analysis/host_state.h"

#include <nlohmann/json.hpp>

#include <string>

namespace ramiel {

// {"cpus": 2, "load_average": 0.55, "round_trip_ns": 66.0, "round_trip_cpus": [0, 1],
//  "cpu_seconds": 7312.4, "stolen_seconds": 30.8} (the last two since boot), null where not
// known (one CPU: no round trip).
nlohmann::json hostStateToJson(const HostState& h);

// The inverse of hostStateToJson (nulls read as unknown). Throws Error(Usage) naming
// `source` where `j` is not such an object.
HostState hostStateFromJson(const nlohmann::json& j, const std::string& source);

// Around a timing: {"before": {...}, "after": {...}, "stolen_share": 0.004 | null,
// "round_trip_moved": false} (roundTripMoved).
nlohmann::json hostAroundToJson(const HostState& before, const HostState& after);

// "load average 0.55, a cache line's round trip of 66.0 ns between CPUs 0 and 1"
// ("load average 0.55, round trip 66.0 ns" with `brief`).
std::string describeHost(const HostState& h, bool brief = false);

// "host: 2 CPUs; before, <describeHost>; after, <describeHost brief>; the hypervisor took
// 0.2 % of the CPUs' time in between": the machine around a timing; it ends by saying so
// where the round trip moved (roundTripMoved).
std::string describeHostAround(const HostState& before, const HostState& after);

}  // namespace ramiel
