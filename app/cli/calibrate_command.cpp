// ramiel calibrate: measure the cost model's machine constants.
#include "commands.h"

#include "core/analysis/host_state.h"
#include "core/analysis/machine.h"
#include "core/report/host_report.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/json_file.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ramiel::cli {

namespace {

// The "host" of what 'calibrate --host --json' wrote to `path`.
HostState readHostState(const std::string& path)
{
    const nlohmann::json j = readJsonFile(path, "the earlier host state");
    if (!j.is_object() || !j.contains("host"))
        throw Error(ErrorKind::Usage, path, "no \"host\" (write it with 'ramiel calibrate --host --json')");
    return hostStateFromJson(j["host"], path);
}

struct CalibrateOptions {
    std::string output;
    bool json = false;
    bool hostOnly = false;  // the host's state alone: nothing measured for the cost model, nothing saved
    std::string since;      // with hostOnly: an earlier state (--host --json) to report this one against
};
}  // namespace

Command addCalibrateCommand(CLI::App& app)
{
    auto opts = std::make_shared<CalibrateOptions>();
    CLI::App* sub = app.add_subcommand(
        "calibrate", "Measure the cost model's machine constants (single-thread GEMM, copy bandwidth, "
                     "per-operator overhead) and cache them for this CPU");
    sub->add_option("-o,--output", opts->output,
                    "Write the constants to this file instead of the cache (use it with --machine)");
    sub->add_flag("--json", opts->json, "Print JSON");
    sub->add_flag("--host", opts->hostOnly,
                  "Only the host's state (CPUs, load average, a cache line's round trip between two CPUs, the "
                  "hypervisor's steal): no constants measured or saved, in a fraction of a second")
        ->excludes("--output");
    sub->add_option("--since", opts->since,
                    "With --host: the state an earlier 'calibrate --host --json' wrote; report the host around "
                    "the time in between (as bench's host line: the hypervisor's share, whether the round trip moved)")
        ->needs("--host");
    return {sub, [opts] {
                const HostState host = probeHost();  // before the probes below load the cores
                if (!opts->since.empty()) {
                    const HostState before = readHostState(opts->since);
                    if (opts->json)
                        std::cout << hostAroundToJson(before, host).dump(2) << "\n";
                    else
                        std::cout << describeHostAround(before, host) << "\n";
                    return 0;
                }
                if (opts->hostOnly) {
                    if (opts->json)
                        std::cout << nlohmann::json{{"host", hostStateToJson(host)}}.dump(2) << "\n";
                    else
                        std::cout << "host           " << countOf(host.cores, "CPU") << ", " << describeHost(host)
                                  << "\n";
                    return 0;
                }
                CalibrationDetail d = runtime().calibrate();
                d.constants.handoffSeconds = measureHandoffSeconds();
                const std::string target = opts->output.empty() ? defaultMachineCachePath() : opts->output;
                if (!target.empty())
                    saveMachineConstants(d.constants, target);
                const MachineConstants& m = d.constants;
                if (opts->json) {
                    std::cout << nlohmann::json{{"flops_per_second", m.flopsPerSecond},
                                                {"bytes_per_second", m.bytesPerSecond},
                                                {"overhead_seconds", m.overheadSeconds},
                                                {"handoff_seconds", m.handoffSeconds},
                                                {"cpu", m.cpu},
                                                {"measured_at", m.measuredAt},
                                                {"host", hostStateToJson(host)},
                                                {"saved_to", target}}
                                     .dump(2)
                              << "\n";
                    return 0;
                }
                std::cout << "cpu            " << m.cpu << "\n"
                          << "GEMM           " << formatDecimal(m.flopsPerSecond, "FLOP/s") << "  (" << d.gemmSize
                          << "^3 float, 1 thread, median " << formatSeconds(d.gemmSeconds) << ")\n"
                          << "bandwidth      " << formatDecimal(m.bytesPerSecond, "B/s") << "  (copy of "
                          << formatBytes(d.copyBytes / 2) << ", 1 thread)\n"
                          << "overhead       " << formatSeconds(m.overheadSeconds) << " per operator\n"
                          << "hand-off       " << formatSeconds(m.handoffSeconds)
                          << " to pass a value to a sleeping thread (cross-cluster edge latency)\n"
                          << "host           " << countOf(host.cores, "CPU") << ", "
                          << describeHost(host) << "\n"
                          << "saved to       " << (target.empty() ? "(nowhere: no cache folder)" : target) << "\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
