// The tuner: a measured search over the ways to run a model on P cores.
//
//   1. profile     every node's median time on 1..P intra-op threads, at each
//                  sub-batch size the candidates use, for each pass list
//   2. enumerate   serial on each thread count; serial with each node on its
//                  best count; every scheduler at every degree d dividing B,
//                  with the planned threads per worker, cores split in
//                  proportion to the clusters' loads, and per-node counts;
//                  the hybrid (d = 1)
//   3. simulate    each candidate with the thread-aware costs; rank
//   4. measure     serial on 1 and P threads, the best serial candidate and
//                  the best others by simulation, each in its own process,
//                  in turns, as many runs as the budget allows
//   5. choose      the fastest measured; say so plainly when it is serial
//
// docs/scheduling.md describes the cost model and the search.
#pragma once

#include "core/analysis/host_state.h"
#include "core/pipeline/run_config.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace ramiel::pipeline {

struct TuneOptions {
    int cores = 0;                 // P; 0: this machine's cores
    int batch = 1;                 // B
    double budgetSeconds = 30;     // for profiling and measuring together
    std::vector<std::string> passes = {kDefaultPasses, "none"};  // pass lists to try
    std::vector<std::string> shapes;
    std::vector<std::string> inputs;  // NAME=FILE.npy: inputs read from files (run_inputs.h); others random
    std::string machineFile;
    bool nodeThreads = true;       // also candidates whose nodes choose their own thread counts
    int predictCores = 0;          // > P: also simulate the candidates for this many cores (not measured)
    // The program and arguments that serve one timed configuration (plus a request file).
    std::vector<std::string> workerCommand;
};

struct TuneCandidate {
    RunConfig config;
    double simulated = 0;          // seconds, thread-aware simulation (serial: the profile's median run)
    std::vector<double> measured;  // seconds of each timed run (empty: not measured)
    bool measuredAlone() const { return !measured.empty(); }
    double median() const;         // of `measured`; NaN when not measured
};

struct TuneResult {
    std::string model;
    int cores = 1, batch = 1;
    std::vector<TuneCandidate> candidates;  // measured ones first, fastest first; then by simulation
    size_t chosen = 0;                      // the fastest measured, unless within kTieMargin of the best serial
    size_t serialOneThread = 0;             // index of serial on 1 thread (default passes)
    size_t bestSerial = 0;                  // the fastest measured serial configuration
    int runsEach = 0;
    double profileSeconds = 0, measureSeconds = 0, totalSeconds = 0;
    std::string verdict;                    // one sentence
    std::string note;                       // empty, or why the search ran past its budget
    HostState hostBefore, hostAfter;        // the machine before profiling and after the last timed run
    // With predictCores: candidates for that many cores, simulated with costs
    // fitted beyond the measured thread counts, fastest first. Predictions only.
    int predictCores = 0;
    std::vector<TuneCandidate> predictions;
};

// Thrown when `cancelled` turns true; worker processes are stopped.
struct TuneCancelled : std::exception {
    const char* what() const noexcept override { return "cancelled"; }
};

// `progress(stage, done, total)`: stage is "profiling" or "measuring".
using TuneProgress = std::function<void(const std::string& stage, int done, int total)>;

TuneResult tune(const std::string& model, const TuneOptions& options, const TuneProgress& progress = {},
                const std::atomic<bool>* cancelled = nullptr);

// A configuration is chosen over the best serial one only when its median is at
// least this much faster: closer than that, separate runs on a shared machine
// order them either way (squeezenet1_0 at batch 1: per-node threads 1.02x
// faster inside tune, 0.92x in the `bench --config` run after it).
constexpr double kTieMargin = 0.03;

// Step 5 of tune: sorts the candidates (measured ones first, fastest first),
// then sets chosen, serialOneThread (`mainPasses`), bestSerial and the verdict.
// The fastest is chosen unless it is not serial and within kTieMargin of the best
// serial configuration, which is then kept. Throws Error(Internal) when no
// serial configuration was measured.
void chooseMeasured(TuneResult& result, const std::string& mainPasses);

// Drops candidates that run exactly as an earlier one: schedulers often agree,
// and one worker on the whole batch with every node on T threads (per-node
// choices that kept every node on P) runs as serial on T threads.
void dropDuplicates(std::vector<TuneCandidate>& candidates);

// {"schema": "ramiel.tune/1", ..., "candidates": [...], "chosen": run configuration}.
nlohmann::json tuneResultToJson(const TuneResult& result);

}  // namespace ramiel::pipeline
