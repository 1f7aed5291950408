// ramiel bench MODEL.onnx: serial (1 and P threads) against the parallel
// schedule, interleaved runs, medians and spread.
// ramiel profile MODEL.onnx -o costs.json: the measured-cost table.
#include "analysis.h"
#include "commands.h"
#include "progress.h"

#include "core/pipeline/isolated_timing.h"
#include "core/pipeline/measure.h"
#include "core/pipeline/run_config.h"
#include "core/pipeline/run_inputs.h"
#include "core/report/host_report.h"
#include "core/report/schedule_json.h"
#include "core/runtime/profiling.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace ramiel::cli {

namespace {

// The simulation's error against a measured time, signed: "+7.9%", "-1.5%".
std::string simulationError(double simulated, double measured)
{
    const double e = 100.0 * (simulated - measured) / measured;
    return (e >= 0 ? "+" : "") + formatFixed(e, 1) + "%";
}

constexpr int kBlock = 3;  // timed runs per turn of a configuration

struct BenchOptions {
    PlanOptions plan;
    std::string config;  // a run configuration (ramiel tune -o) to time instead of planning
    int runs = 20;
    bool sameProcess = false;  // time every configuration in this process (they disturb each other)
};

struct ProfileOptions {
    ModelOptions model;
    std::string output;
    int batch = 1;
    int threads = 1;
    std::vector<int> threaded;  // also measure on each of these thread counts
    int runs = 10;
};

struct Series {
    std::string name;
    int threads;  // the most any item uses
    int workers;
    std::string shape;  // workers x threads, as tune and cluster name them
    std::vector<double> seconds;
};

Series serialSeries(int threads) { return {"serial", threads, 1, "1 worker x " + countOf(threads, "thread"), {}}; }

Series scheduleSeries(const std::string& name, const Schedule& s)
{
    return {name, s.maxThreads(), int(s.clusters.size()), describeThreads(s), {}};
}

double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

void progress(int done, int total) { showProgress("runs", done, total); }

// The configurations bench times: serial on 1 and P threads, the planned
// schedule, and the hybrid when it applies.
struct Configurations {
    std::shared_ptr<const pipeline::PlannedModel> parallel, hybrid;  // null with --config
    std::optional<Schedule> configured;                               // --config's schedule
    std::string costSource;
    double soloPrediction = 0;  // the parallel schedule simulated with costs measured alone
    double parallelSimulated = 0;
    double hybridSimulated = 0;  // with costs measured inside the hybrid's own run
    double hybridPlanned = 0;    // as planned: costs measured alone and inside the parallel run
    std::vector<double> serialSimulated;  // serial on 1 and P threads, with the costs measured alone
    std::vector<Series> series;
    std::vector<pipeline::TimedConfiguration> timed;   // what each series runs
    std::vector<std::unique_ptr<Executor>> executors;  // with --same-process only
    HostState hostBefore, hostAfter;                    // the machine before planning and after the last run
};

// Measures the costs (unless given), plans the schedule and the hybrid, and
// makes an executor for every configuration.
Configurations planConfigurations(const std::shared_ptr<const pipeline::PreparedModel>& prepared,
                                  const pipeline::PlanSettings& settings, CompiledModel& compiled, bool sameProcess)
{
    const int P = settings.cores();
    const bool measured = settings.costs == "measured";
    pipeline::PlanSettings parallel = settings;
    parallel.hybrid = false;
    pipeline::Costs costs =
        measured ? pipeline::measureCosts(*prepared, parallel, compiled) : pipeline::costTable(*prepared, parallel);
    Configurations c;
    for (int t : {1, P})
        c.serialSimulated.push_back(
            simulateMakespan(pipeline::oneWorkerSchedule(*prepared, settings.batch, t), *costs.table));
    c.parallel = pipeline::plan(prepared, parallel, costs, false);
    c.soloPrediction = c.parallelSimulated = c.parallel->plan.simulation.makespan;
    compiled.setInputs(pipeline::runInputs(prepared->model, compiled, prepared->inputFiles, settings.batch, 1));
    std::unique_ptr<Executor> parallelExecutor =
        compiled.parallelExecutor(c.parallel->plan.schedule);
    if (measured && c.parallel->plan.schedule.clusters.size() > 1) {
        // Costs in context: each node timed where the parallel schedule runs it, beside the other
        // workers. The simulation of that schedule and the hybrid's planning use them.
        costs = pipeline::measureInContext(*prepared, costs, *parallelExecutor, c.parallel->plan.schedule,
                                           settings.batch);
        c.parallelSimulated = pipeline::simulateWith(*c.parallel, costs).makespan;
    }
    pipeline::PlanSettings hybrid = parallel;
    hybrid.hybrid = true;
    c.hybrid = pipeline::plan(prepared, hybrid, costs, false);
    c.costSource = costs.table->source();
    c.hybridSimulated = c.hybridPlanned = c.hybrid->plan.simulation.makespan;
    std::unique_ptr<Executor> hybridExecutor;
    if (c.hybrid->plan.hybrid.applied()) {
        hybridExecutor = compiled.parallelExecutor(c.hybrid->plan.schedule);
        // Its nodes timed in its own run too, each on the threads it runs with there.
        if (measured)
            c.hybridSimulated =
                pipeline::simulateWith(*c.hybrid, pipeline::measureInContext(*prepared, costs, *hybridExecutor,
                                                                             c.hybrid->plan.schedule, settings.batch))
                    .makespan;
    }

    // A plan with one worker is not parallel: it is named for what it is.
    c.series = {serialSeries(1), serialSeries(P),
                scheduleSeries(c.parallel->plan.schedule.clusters.size() > 1 ? "parallel" : "one worker",
                               c.parallel->plan.schedule)};
    c.timed = {{"serial on 1 thread", 1, nullptr, {}},
               {"serial on " + std::to_string(P) + " threads", P, nullptr, {}},
               {"the parallel schedule", 1, &c.parallel->plan.schedule, {}}};
    if (c.hybrid->plan.hybrid.applied()) {
        c.series.push_back(scheduleSeries("hybrid", c.hybrid->plan.schedule));
        c.timed.push_back({"the hybrid schedule", 1, &c.hybrid->plan.schedule, {}});
    }
    if (sameProcess) {
        c.executors.push_back(compiled.serialExecutor(1));
        c.executors.push_back(compiled.serialExecutor(P));
        c.executors.push_back(std::move(parallelExecutor));
        if (hybridExecutor)
            c.executors.push_back(std::move(hybridExecutor));
    }
    return c;
}

// With --config: serial on 1 and P threads and the configuration.
Configurations configuredConfigurations(const pipeline::RunConfig& config, const pipeline::PreparedModel& prepared,
                                        const std::string& file)
{
    Configurations c;
    const int P = config.settings.cores();
    c.costSource = "no";
    c.configured = pipeline::scheduleFor(config, prepared, file);
    c.series = {serialSeries(1), serialSeries(P)};
    c.timed = {{"serial on 1 thread", 1, nullptr, {}}, {"serial on " + std::to_string(P) + " threads", P, nullptr, {}}};
    if (config.serial() && (config.serialThreads == 1 || config.serialThreads == P))
        return c;
    const Schedule& s = *c.configured;
    c.series.push_back(scheduleSeries(config.title(), s));
    c.timed.push_back({config.label(), 1, &*c.configured, {}});
    return c;
}

// Each configuration in its own process (this program as `ramiel time-worker`), in turns.
void timeInOwnProcesses(Configurations& c, const ModelOptions& model, int batch, int runs)
{
    pipeline::TimingRequest request;
    request.model = model.model;
    request.prepare = model.prepare;
    request.batch = batch;
    request.seed = 1;
    const auto seconds =
        pipeline::timeInOwnProcesses(request, c.timed, {"/proc/self/exe", "time-worker"}, runs, kBlock, progress);
    for (size_t k = 0; k < c.series.size(); ++k)
        c.series[k].seconds = seconds[k];
}

// Configurations take turns in blocks, so machine noise hits them alike; each
// block starts with untimed runs (pipeline::warmUpTurn, as in the timing
// workers), because the first runs after another configuration find cold
// caches and sleeping threads (squeezenet1_0 on one 2-thread worker: 40 ms right
// after a 1-thread serial run, 25 ms after that). In one process (--same-process)
// they also disturb each other.
void timeInTurns(Configurations& c, int runs)
{
    for (auto& e : c.executors)
        warmUp(*e);
    const int total = runs * int(c.executors.size());
    for (int done = 0; done < runs;) {
        const int block = std::min(kBlock, runs - done);
        for (size_t k = 0; k < c.executors.size(); ++k) {
            pipeline::warmUpTurn(*c.executors[k]);
            for (int b = 0; b < block; ++b) {
                c.series[k].seconds.push_back(c.executors[k]->run());
                progress(int(k) * block + done * int(c.executors.size()) + b + 1, total);
            }
        }
        done += block;
    }
}

double simulatedFor(const Configurations& c, const Series& s)
{
    if (!c.parallel)
        return std::nan("");
    if (&s == &c.series[0] || &s == &c.series[1])
        return c.serialSimulated[&s == &c.series[0] ? 0 : 1];
    return s.name == "hybrid" ? c.hybridSimulated : c.parallelSimulated;
}

// How the configurations were timed, for the report.
std::string howTimed(bool sameProcess, int runsEach)
{
    return std::to_string(runsEach) + " runs each, in turns of " + std::to_string(std::min(kBlock, runsEach)) +
           " after " + formatFixed(pipeline::kTurnWarmUpSeconds, 1) + " s of untimed runs, " +
           (sameProcess ? "all in this process (they disturb each other)" : "each configuration in its own process");
}

void printBenchJson(const pipeline::PreparedModel& prepared, const pipeline::PlanSettings& settings,
                    const Configurations& c, int runsEach, bool sameProcess)
{
    const double serial1 = median(c.series[0].seconds), best = std::min(serial1, median(c.series[1].seconds));
    nlohmann::json runs = nlohmann::json::array();
    for (const Series& s : c.series) {
        nlohmann::json row = {{"configuration", s.name},
                              {"intra_op_threads", s.threads},
                              {"workers", s.workers},
                              {"median_ms", median(s.seconds) * 1e3},
                              {"p25_ms", quantile(s.seconds, 0.25) * 1e3},
                              {"p75_ms", quantile(s.seconds, 0.75) * 1e3},
                              {"min_ms", quantile(s.seconds, 0) * 1e3},
                              {"max_ms", quantile(s.seconds, 1) * 1e3}};
        if (s.name != "serial") {
            row["speedup_vs_serial_1t"] = serial1 / median(s.seconds);
            row["speedup_vs_best_serial"] = best / median(s.seconds);
        }
        if (c.parallel)
            row["simulated_ms"] = simulatedFor(c, s) * 1e3;
        if (c.parallel && &s == &c.series[2])  // the planned schedule
            row["simulated_solo_costs_ms"] = c.soloPrediction * 1e3;
        if (c.parallel && s.name == "hybrid")
            row["simulated_as_planned_ms"] = c.hybridPlanned * 1e3;
        runs.push_back(row);
    }
    nlohmann::json j = {{"schema", "ramiel.bench/1"},
                        {"model", prepared.path},
                        {"passes", prepared.passes},
                        {"algorithm", settings.algorithm},
                        {"workers", settings.cores()},
                        {"batch", settings.batch},
                        {"degree", settings.degree},
                        {"cost_source", c.costSource},
                        {"runs_each", runsEach},
                        {"isolation", sameProcess ? "same process" : "own process"},
                        {"host", hostAroundToJson(c.hostBefore, c.hostAfter)},
                        {"runs", runs}};
    if (c.parallel) {
        j["speedup_bound"] = c.parallel->bound;
        const HybridReport& h = c.hybrid->plan.hybrid;
        j["hybrid"] = hybridReportToJson(h);
        j["hybrid"]["simulated_before_ms"] = h.makespanBefore * 1e3;
        j["hybrid"]["simulated_after_ms"] = h.makespanAfter * 1e3;
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void printBenchText(const pipeline::PreparedModel& prepared, const pipeline::PlanSettings& settings,
                    const Configurations& c, int runsEach, bool sameProcess)
{
    const double serial1 = median(c.series[0].seconds), best = std::min(serial1, median(c.series[1].seconds));
    std::cout << printable(prepared.path) << ": " << passes::passesRunText(prepared.passes) << ", batch "
              << settings.batch << ", " << howTimed(sameProcess, runsEach)
              << "; " << c.costSource << " costs\n";
    std::cout << "  " << describeHostAround(c.hostBefore, c.hostAfter) << "\n";
    for (const Series& s : c.series) {
        char line[300];
        std::snprintf(line, sizeof line, "  %-10s %-36s  median %9s  (p25 %s, p75 %s)", s.name.c_str(),
                      s.shape.c_str(), formatSeconds(median(s.seconds)).c_str(), formatSeconds(quantile(s.seconds, 0.25)).c_str(),
                      formatSeconds(quantile(s.seconds, 0.75)).c_str());
        std::cout << line;
        if (c.parallel && s.name == "serial") {
            const double t = median(s.seconds), simulated = simulatedFor(c, s);
            std::cout << "  simulated " << formatSeconds(simulated) << " ("
                      << simulationError(simulated, t) << ")";
        }
        std::cout << "\n";
    }
    for (const Series& s : c.series) {
        if (s.name == "serial")
            continue;
        const double t = median(s.seconds), simulated = simulatedFor(c, s);
        if (!c.parallel) {
            std::cout << "  " << s.name << " (" << s.workers << " worker" << (s.workers == 1 ? "" : "s")
                      << ", up to " << s.threads << " thread" << (s.threads == 1 ? "" : "s") << " each): "
                      << formatFixed(serial1 / t, 2) << "x over serial 1 thread, " << formatFixed(best / t, 2)
                      << "x over the best serial\n";
            continue;
        }
        std::cout << "  " << s.name << " (" << settings.algorithm << ", P = " << settings.cores()
                  << ", d = " << settings.degree << "): " << formatFixed(serial1 / t, 2)
                  << "x over serial 1 thread (inter-op bound " << formatFixed(c.parallel->bound, 2) << "x), "
                  << formatFixed(best / t, 2) << "x over the best serial; simulated " << formatSeconds(simulated)
                  << " (" << simulationError(simulated, t) << ")\n";
    }
    if (!c.hybrid)
        return;
    if (settings.costs == "measured") {
        std::cout << "  (simulated with per-node costs measured inside each schedule's own run; with costs measured "
                     "alone the parallel schedule simulates at "
                  << formatSeconds(c.soloPrediction);
        if (c.hybrid->plan.hybrid.applied())
            std::cout << ", the hybrid as planned at " << formatSeconds(c.hybridPlanned);
        std::cout << ")\n";
    }
    const HybridReport& h = c.hybrid->plan.hybrid;
    if (h.applied())
        std::cout << "  hybrid: " << h.summary() << "\n";
    else
        std::cout << "  hybrid: not used ("
                  << (h.skipped.empty() ? "no cut or stretch gains in simulation" : h.skipped) << ")\n";
}

}  // namespace

Command addBenchCommand(CLI::App& app)
{
    auto opts = std::make_shared<BenchOptions>();
    PlanOptions& o = opts->plan;
    o.settings.costs = "measured";
    CLI::App* sub = app.add_subcommand(
        "bench", "Time serial (1 and P intra-op threads) against the parallel schedule, interleaved; medians and speedups");
    addPlanOptions(sub, o);
    addInputFilesOption(sub, o.model);
    sub->add_option("--config", opts->config,
                    "Time this run configuration ('ramiel tune -o FILE') against serial on 1 and P threads, "
                    "instead of planning; its passes, batch and P replace the options");
    sub->add_option("--runs", opts->runs, "Timed runs of each configuration")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_flag("--same-process", opts->sameProcess,
                  "Time every configuration in this process instead of each in its own (they disturb each other: "
                  "for comparison only)");
    return {sub, [opts] {
                PlanOptions o = opts->plan;
                if (!opts->config.empty()) {
                    if (opts->sameProcess)
                        throw Error(ErrorKind::Usage, opts->config, "--config times in own processes only");
                    const HostState before = probeHost();
                    const pipeline::RunConfig config = pipeline::readRunConfig(opts->config);
                    o.model.prepare = pipeline::prepareOptionsOf(config, o.model.prepare);
                    o.settings = config.settings;
                    const auto prepared = prepareModel(o.model);
                    Configurations c = configuredConfigurations(config, *prepared, opts->config);
                    c.costSource = "configuration " + opts->config + ", no";
                    c.hostBefore = before;
                    timeInOwnProcesses(c, o.model, o.settings.batch, opts->runs);
                    c.hostAfter = probeHost();
                    if (o.json)
                        printBenchJson(*prepared, o.settings, c, opts->runs, false);
                    else
                        printBenchText(*prepared, o.settings, c, opts->runs, false);
                    return 0;
                }
                const HostState before = probeHost();
                const auto prepared = prepareModel(o.model);
                const auto compiled = runtime().compile(prepared->model);
                Configurations c = planConfigurations(prepared, o.settings, *compiled, opts->sameProcess);
                c.hostBefore = before;
                if (opts->sameProcess)
                    timeInTurns(c, opts->runs);
                else
                    timeInOwnProcesses(c, o.model, o.settings.batch, opts->runs);
                c.hostAfter = probeHost();
                if (o.json)
                    printBenchJson(*prepared, o.settings, c, opts->runs, opts->sameProcess);
                else
                    printBenchText(*prepared, o.settings, c, opts->runs, opts->sameProcess);
                return 0;
            }};
}

Command addProfileCommand(CLI::App& app)
{
    auto o = std::make_shared<ProfileOptions>();
    CLI::App* sub = app.add_subcommand("profile", "Measure every node's time (median of serial runs) and write the "
                                                  "table 'ramiel cluster --costs' reads");
    addModelOptions(sub, o->model);
    sub->add_option("-o,--output", o->output, "The JSON file to write")->required();
    addInputFilesOption(sub, o->model);
    sub->add_option("-b,--batch", o->batch, "Samples per run (of random inputs; files set their own)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--threads", o->threads, "Intra-op threads (default 1: what each parallel worker uses)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--threaded", o->threaded,
                    "Also measure every node on each of these intra-op thread counts, e.g. 2,4 (for thread-aware "
                    "plans: hybrid schedules, workers with several threads)")
        ->delimiter(',')
        ->check(CLI::Range(2, 1024));
    sub->add_option("--runs", o->runs, "Timed runs")->capture_default_str()->check(CLI::PositiveNumber);
    return {sub, [o] {
                const Model model = pipeline::loadModel(o->model.model, o->model.prepare);
                const auto compiled = runtime().compile(model);
                compiled->setInputs(pipeline::runInputs(model, *compiled, o->model.prepare.inputs, o->batch, 1,
                                                        pipeline::FileSamples::AsHeld));
                const int threads = o->threads;
                const HostState before = probeHost();
                const MeasuredCosts m = profileNodes(*compiled, model.graph.nodeCount(), o->batch, o->runs, threads);
                std::vector<MeasuredCosts> threaded;
                for (int k : o->threaded)
                    threaded.push_back(profileNodes(*compiled, model.graph.nodeCount(), o->batch, o->runs, k));
                const HostState after = probeHost();
                writeMeasuredCosts(o->output, model.graph, m, threaded, hostAroundToJson(before, after));
                double sum = 0;
                for (double s : m.nodeSeconds)
                    sum += s;
                std::cout << printable(model.path) << ": " << model.graph.nodeCount() << " nodes, median run "
                          << formatSeconds(m.medianTotal) << " (" << threads << " thread" << (threads == 1 ? "" : "s")
                          << ", batch " << o->batch << ", " << o->runs << " runs); node medians sum to "
                          << formatSeconds(sum);
                for (const MeasuredCosts& t : threaded)
                    std::cout << "; on " << t.threads << " threads, median run " << formatSeconds(t.medianTotal);
                auto fewerThreads = [&](const MeasuredCosts& t) {
                    const auto fewer = std::count_if(t.nodeThreads.begin(), t.nodeThreads.end(),
                                                     [&](int k) { return k < t.threads; });
                    if (fewer == std::ptrdiff_t(t.nodeThreads.size()))
                        std::cout << "\n  on " << t.threads << " threads, every node ran on one (the whole run "
                                  << "measured faster so)";
                    else if (fewer > 0)
                        std::cout << "\n  on " << t.threads << " threads, " << fewer << " of "
                                  << model.graph.nodeCount() << " nodes ran on one (measured faster so)";
                };
                fewerThreads(m);
                for (const MeasuredCosts& t : threaded)
                    fewerThreads(t);
                std::cout << "\n  " << describeHostAround(before, after) << "\n  wrote " << o->output << "\n";
                return 0;
            }};
}

Command addTimeWorkerCommand(CLI::App& app)
{
    auto request = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand("time-worker", "Serve one configuration's timed runs for 'ramiel bench'");
    sub->group("");  // hidden: started by bench, not by people
    sub->add_option("request", *request, "The request file bench wrote")->required();
    return {sub, [request] { return pipeline::serveTimings(*request); }};
}

}  // namespace ramiel::cli
