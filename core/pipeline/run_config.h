// A configuration that runs a model: its passes and input sizes, the batch,
// and either serial on some intra-op threads or a schedule whose workers
// carry their own thread counts. `ramiel tune` chooses one; `--config FILE`
// gives it to bench, export and Ramiel Studio. The file:
//
//   {"schema": "ramiel.config/1", "model": "googlenet.onnx", "passes": "default",
//    "shapes": [], "label": "linear, 2 workers x 1 thread", "settings": {plan options by name},
//    "serial_threads": 2 | absent, "schedule": {the schedule, field for field} | absent}
//
// A tune report (`ramiel tune --json`) is read too: its "chosen" member is the configuration.
#pragma once

#include "core/pipeline/pipeline.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ramiel::pipeline {

struct RunConfig {
    std::string model;             // the file it was tuned on (informative)
    std::string passes = kDefaultPasses;
    std::vector<std::string> shapes;
    PlanSettings settings;         // how the schedule was planned; batch and P always hold
    int serialThreads = 0;         // > 0: serial on this many threads, no schedule
    std::optional<Schedule> schedule;

    bool serial() const { return serialThreads > 0; }
    // What runs: "serial", "serial, per-node threads", "linear", "hybrid linear",
    // "heft d=2", with ", no passes" when the passes are off.
    std::string title() const;
    // Workers and threads: "1 worker x 2 threads", "2 workers x 1 thread", "2 workers (3+1 threads)".
    std::string threadsText() const;
    // Both: "linear (2 workers x 1 thread)".
    std::string label() const { return title() + " (" + threadsText() + ")"; }
};

nlohmann::json runConfigToJson(const RunConfig& config);
// Throws Error(Usage) naming `path` when the document is not a configuration.
// The schedule is checked against the model when it is prepared (scheduleFor).
RunConfig runConfigFromJson(const nlohmann::json& j, const std::string& path);
RunConfig readRunConfig(const std::string& path);
void writeRunConfig(const std::string& path, const RunConfig& config);

// The prepare options of a configuration (its passes and sizes; `shapes`
// given on a command line win over the file's).
PrepareOptions prepareOptionsOf(const RunConfig& config, const PrepareOptions& base);

// The schedule that runs the configuration on `prepared` (made with
// prepareOptionsOf): the stored one, checked against the model, or for a
// serial configuration one worker running every node in topological order
// on its threads. Throws Error(Usage) naming `path` when it does not fit.
Schedule scheduleFor(const RunConfig& config, const PreparedModel& prepared, const std::string& path = {});

// One worker holding every node of `batch` samples in topological order, on `threads` threads.
Schedule oneWorkerSchedule(const PreparedModel& prepared, int batch, int threads);

// The plan settings closest to the configuration, for a view's knobs: its
// own, but "serial" with P = its threads where it runs on one worker.
PlanSettings planSettingsOf(const RunConfig& config);

}  // namespace ramiel::pipeline
