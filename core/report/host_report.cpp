#include "core/report/host_report.h"

#include "core/util/error.h"
#include "core/util/text.h"

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

HostState hostStateFromJson(const nlohmann::json& j, const std::string& source)
{
    auto number = [&](const char* key) {
        const nlohmann::json& v = j.at(key);
        return v.is_null() ? -1.0 : v.get<double>();
    };
    try {
        HostState h;
        h.cores = j.at("cpus").get<int>();
        h.loadAverage = number("load_average");
        h.roundTripSeconds = j.at("round_trip_ns").is_null() ? -1.0 : number("round_trip_ns") * 1e-9;
        if (const nlohmann::json& cpus = j.at("round_trip_cpus"); !cpus.is_null()) {
            h.cpuA = cpus.at(0).get<int>();
            h.cpuB = cpus.at(1).get<int>();
        }
        h.cpuSeconds = number("cpu_seconds");
        h.stolenSeconds = number("stolen_seconds");
        return h;
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, source,
                    std::string("not a host state (as 'ramiel calibrate --host --json' writes): ") + e.what());
    }
}

nlohmann::json hostAroundToJson(const HostState& before, const HostState& after)
{
    const double stolen = stolenShare(before, after);
    return {{"before", hostStateToJson(before)},
            {"after", hostStateToJson(after)},
            {"stolen_share", stolen >= 0 ? nlohmann::json(stolen) : nlohmann::json()},
            {"round_trip_moved", roundTripMoved(before, after)}};
}

std::string describeHost(const HostState& h, bool brief)
{
    std::string s = "load average " + (h.loadAverage >= 0 ? formatFixed(h.loadAverage, 2) : std::string("unknown"));
    if (h.roundTripSeconds < 0)
        return s + (brief ? "" : h.cores < 2 ? ", no round trip to time (one CPU)" : ", no round trip (threads not pinned)");
    if (brief)
        return s + ", round trip " + formatSeconds(h.roundTripSeconds);
    return s + ", a cache line's round trip of " + formatSeconds(h.roundTripSeconds) + " between CPUs " +
           std::to_string(h.cpuA) + " and " + std::to_string(h.cpuB);
}

std::string describeHostAround(const HostState& before, const HostState& after)
{
    const double stolen = stolenShare(before, after);
    return "host: " + countOf(before.cores, "CPU") + "; before, " +
           describeHost(before) + "; after, " + describeHost(after, true) +
           (stolen >= 0 ? "; the hypervisor took " + formatFixed(stolen * 100, 1) + " % of the CPUs' time in between"
                        : std::string()) +
           (roundTripMoved(before, after)
                ? "; the round trip changed more than " + formatFixed(kRoundTripMoved, 0) +
                      "x in between: the host moved its CPUs, and the times mix two placements"
                : std::string());
}

}  // namespace ramiel
