// Timing configurations that cannot disturb each other: each runs in its own
// process (this program started again as a timing worker), and they take
// turns. In one process they do disturb each other: idle intra-op pools spin,
// caches and allocator state are shared, and kernels prepared for one thread
// count run under another (docs/performance.md).
//
// Protocol, one line each way: the worker loads the model, compiles it, sets
// seeded inputs, makes its executor and says "ready"; "warm K" makes K untimed
// runs, answered "warm"; "run K" makes untimed runs for kTurnWarmUpSeconds (at
// least one) and then K timed ones, answered "times t1 ... tK" in seconds;
// "quit" or the end of its input ends it.
#pragma once

#include "core/pipeline/pipeline.h"
#include "core/runtime/runtime.h"

#include <functional>
#include <string>
#include <vector>

namespace ramiel::pipeline {

// Untimed runs each worker makes after all have loaded, one worker at a time:
// enough for its kernels to settle their timed choices.
constexpr int kWarmUpRuns = kSettlingRuns;

// Untimed running at the start of each turn. After other configurations' turns a
// worker's first runs are slow and speed up over tens of milliseconds (mobilenet_v2
// on one thread, turns of six timed runs after one untimed: 6.6, 6.2, 6.0, 5.8, 5.8,
// 5.8 ms); after 50 ms or more of untimed runs the six are level (docs/performance.md).
constexpr double kTurnWarmUpSeconds = 0.1;

// A turn's untimed start: runs `executor` for kTurnWarmUpSeconds, at least once.
void warmUpTurn(Executor& executor);

// What every worker loads and runs on.
struct TimingRequest {
    std::string model;
    PrepareOptions prepare;  // shapes and passes (the node ids of a schedule depend on them)
    int batch = 1;
    uint64_t seed = 1;
};

// One configuration: serial on `threads` intra-op threads, or `schedule` on
// one worker per cluster (with the schedule's worker threads).
struct TimedConfiguration {
    std::string label;
    int threads = 1;
    const Schedule* schedule = nullptr;
    std::string passes;  // empty: the request's
};

// Starts one worker per configuration (`workerCommand` plus a request file:
// the program and the arguments that make it serve; they load side by side,
// untimed, then warm up in turn), then times them in turns of `block` runs until each has `runs`,
// or until `stop(turnSeconds)` says so after a whole turn (given how long that
// turn took). Seconds by configuration.
// `progress(done, total)` after each timed run (it may throw to abandon the
// timing; the workers are stopped); `onTime(configuration, seconds)` for each
// time as it comes. Throws Error(Runtime) when a worker fails (its own error
// goes to stderr).
std::vector<std::vector<double>> timeInOwnProcesses(const TimingRequest& request,
                                                    const std::vector<TimedConfiguration>& configurations,
                                                    const std::vector<std::string>& workerCommand, int runs,
                                                    int block, const std::function<void(int, int)>& progress = {},
                                                    const std::function<bool(double)>& stop = {},
                                                    const std::function<void(size_t, double)>& onTime = {});

// The worker's side: serves the request file until told to quit. Returns the exit code.
int serveTimings(const std::string& requestFile);

}  // namespace ramiel::pipeline
