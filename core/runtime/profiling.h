// Measured costs: per-node median times over repeated serial runs, written as
// the table `ramiel cluster --costs FILE.json` reads (docs/scheduling.md).
#pragma once

#include "core/runtime/runtime.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ramiel {

struct MeasuredCosts {
    int batch = 1;      // samples in the inputs measured
    int threads = 1;    // intra-op threads
    int runs = 0;
    std::vector<double> nodeSeconds;  // median per node id
    std::vector<int> nodeThreads;     // per node id, serial runs: the threads it ran with (last run)
    double medianTotal = 0;
};

// The whole run's median less the nodes' medians, per node (at least 0): the
// executor's own time, which no node's timer sees but every node costs.
double untimedPerNode(const MeasuredCosts& costs);

// Runs up to `warmup` untimed serial runs of the model's current inputs (until the
// executor has settled), then `runs` timed ones.
MeasuredCosts profileNodes(CompiledModel& model, size_t nodeCount, int batch, int runs, int threads,
                           int warmup = kSettlingRuns);

// The same with any executor: with a parallel one, each node's time is
// measured where the schedule puts it, next to whatever runs beside it
// (workers contend for caches and memory), summed over graph copies.
MeasuredCosts profileExecutor(Executor& executor, size_t nodeCount, int batch, int runs, int threads,
                              int warmup = kSettlingRuns);

// {"schema": "ramiel.costs/1", "batch", "threads", "runs", "median_total", "nodes": {name: seconds}},
// and with `threaded` (the same batch on more intra-op threads) "threaded": [{"threads",
// "runs", "median_total", "nodes"}, ...], which thread-aware plans use. A table whose
// nodes ran on fewer threads than its own (measured faster so) names them in
// "fewer_threads". `host`, where given, is the machine's state around the runs
// (hostAroundToJson, core/report/host_report.h).
void writeMeasuredCosts(const std::string& path, const Graph& graph, const MeasuredCosts& costs,
                        const std::vector<MeasuredCosts>& threaded = {},
                        const nlohmann::json& host = nlohmann::json());

double median(std::vector<double> values);

}  // namespace ramiel
