#include "core/report/host_json.h"

namespace ramiel {

nlohmann::json hostStateToJson(const HostState& h)
{
    const bool trip = h.roundTripSeconds >= 0;
    return {{"cpus", h.cores},
            {"load_average", h.loadAverage >= 0 ? nlohmann::json(h.loadAverage) : nlohmann::json()},
            {"round_trip_ns", trip ? nlohmann::json(h.roundTripSeconds * 1e9) : nlohmann::json()},
            {"round_trip_cpus", trip ? nlohmann::json::array({h.cpuA, h.cpuB}) : nlohmann::json()},
            {"cpu_seconds", h.cpuSeconds >= 0 ? nlohmann::json(h.cpuSeconds) : nlohmann::json()},
            {"stolen_seconds", h.stolenSeconds >= 0 ? nlohmann::json(h.stolenSeconds) : nlohmann::json()}};
}

nlohmann::json hostAroundToJson(const HostState& before, const HostState& after)
{
    const double stolen = stolenShare(before, after);
    return {{"before", hostStateToJson(before)},
            {"after", hostStateToJson(after)},
            {"stolen_share", stolen >= 0 ? nlohmann::json(stolen) : nlohmann::json()}};
}

}  // namespace ramiel
