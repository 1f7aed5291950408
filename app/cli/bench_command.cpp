// ramiel bench MODEL.onnx: serial (1 and P threads) against the parallel
// schedule, interleaved runs, medians and spread.
// ramiel profile MODEL.onnx -o costs.json: the measured-cost table.
#include "analysis.h"
#include "commands.h"
#include "format.h"

#include "core/onnx/onnx_import.h"
#include "core/report/schedule_json.h"
#include "core/runtime/profiling.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace ramiel::cli {

namespace {

constexpr int kBlock = 3;  // timed runs per turn of a configuration

struct BenchOptions {
    PlanOptions plan;
    int runs = 20;
};

struct ProfileOptions {
    ModelOptions model;
    std::string output;
    int batch = 1;
    int threads = 1;
    int threaded = 0;  // > 1: also measure on this many threads
    int runs = 10;
};

struct Series {
    std::string name;
    int threads;
    int workers;
    std::vector<double> seconds;
};

double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

void progress(int done, int total)
{
    if (!isatty(STDERR_FILENO))
        return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\r  [%s%s] %d/%d runs", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), ' ').c_str(), done, total);
    if (done == total)
        std::fprintf(stderr, "\r%60s\r", "");
    std::fflush(stderr);
}

}  // namespace

Command addBenchCommand(CLI::App& app)
{
    auto opts = std::make_shared<BenchOptions>();
    PlanOptions& o = opts->plan;
    o.costs.costs = "measured";
    CLI::App* sub = app.add_subcommand(
        "bench", "Time serial (1 and P intra-op threads) against the parallel schedule, interleaved; medians and speedups");
    addPlanOptions(sub, o);
    sub->add_option("-a,--algo", o.algorithm, "Scheduler: linear, dsc, heft or serial")->capture_default_str();
    sub->add_option("--runs", opts->runs, "Timed runs of each configuration")->capture_default_str()->check(CLI::PositiveNumber);
    return {sub, [opts] {
                const PlanOptions& o = opts->plan;
                findScheduler(o.algorithm);
                const int P = coresOf(o);
                const bool measured = o.costs.costs == "measured";
                CostOptions staticCosts = o.costs;
                if (measured)
                    staticCosts.costs = "static";
                const auto a = loadAnalysis(o.model, staticCosts);
                const auto compiled = runtime().compile(a->model);
                SchedulingProblem p = problemFor(*a, o);
                if (measured) {
                    // Per-node medians at the sub-batch size the copies run, on one
                    // thread and (for the hybrid) on P threads.
                    const std::vector<int> sizes = p.subBatches();
                    const int sub = *std::max_element(sizes.begin(), sizes.end());
                    compiled->setInputs(compiled->randomInputs(sub, 1));
                    const size_t nodes = a->model.graph.nodeCount();
                    const MeasuredCosts m = profileNodes(*compiled, nodes, sub, 10, 1);
                    *a->costs = CostTable::fromMeasuredSeconds(m.nodeSeconds, sub, *a->costs, "measured");
                    if (P > 1 && p.degree == 1) {
                        const MeasuredCosts mP = profileNodes(*compiled, nodes, sub, 10, P);
                        a->costs->setThreadedSeconds(P, mP.nodeSeconds, sub);
                    }
                }
                const size_t nodeCount = a->model.graph.nodeCount();
                p.hybridThreads = 1;
                Plan plan = planSchedule(p, o.algorithm);
                // What inter-op parallelism alone can gain over one-thread serial, from the costs measured alone.
                const double lowerBound = std::max(plan.span, plan.work / P);
                const double bound = lowerBound > 0 ? plan.simulation.serial / lowerBound : 0;
                const std::string costSource = a->costs->source();
                compiled->setInputs(compiled->randomInputs(o.batch, 1));
                const std::vector<int> threads = threadsPerWorker(plan, *a->costs, P);
                std::unique_ptr<Executor> parallel = compiled->parallelExecutor(plan.schedule, threads);
                const double soloPrediction = plan.simulation.makespan;
                if (measured && plan.schedule.clusters.size() > 1) {
                    // Costs in context: each node timed where the parallel schedule runs it,
                    // beside the other workers (they contend for caches and memory). The
                    // simulation of that schedule and the hybrid's planning use them.
                    const MeasuredCosts inContext = profileExecutor(*parallel, nodeCount, o.batch, 15, 1);
                    *a->costs = CostTable::fromMeasuredSeconds(inContext.nodeSeconds, o.batch, *a->costs,
                                                               "measured in context");
                    plan.simulation = simulate(plan.schedule, *a->costs);
                }
                p.hybridThreads = P;
                const Plan hybrid = planSchedule(p, o.algorithm);

                std::vector<Series> series = {{"serial", 1, 1, {}}, {"serial", P, 1, {}}, {"parallel", 1, P, {}}};
                std::vector<std::unique_ptr<Executor>> executors;
                executors.push_back(compiled->serialExecutor(1));
                executors.push_back(compiled->serialExecutor(P));
                executors.push_back(std::move(parallel));
                series[2].workers = int(plan.schedule.clusters.size());
                series[2].threads = *std::max_element(threads.begin(), threads.end());
                if (hybrid.hybrid.applied()) {
                    executors.push_back(compiled->parallelExecutor(hybrid.schedule, threadsPerWorker(hybrid, *a->costs, P)));
                    series.push_back({"hybrid", P, int(hybrid.schedule.clusters.size()), {}});
                }
                for (int w = 0; w < 3; ++w)
                    for (auto& e : executors)
                        e->run();
                // Configurations take turns in blocks, so machine noise hits them alike;
                // each block starts with an untimed run, because the first run after another
                // configuration finds cold caches and sleeping threads (squeezenet1_0 on one
                // 2-thread worker: 40 ms right after a 1-thread serial run, 25 ms after that).
                const int total = opts->runs * int(executors.size());
                for (int done = 0; done < opts->runs;) {
                    const int block = std::min(kBlock, opts->runs - done);
                    for (size_t k = 0; k < executors.size(); ++k) {
                        executors[k]->run();
                        for (int b = 0; b < block; ++b) {
                            series[k].seconds.push_back(executors[k]->run());
                            progress(int(k) * block + done * int(executors.size()) + b + 1, total);
                        }
                    }
                    done += block;
                }

                const double serial1 = median(series[0].seconds), serialP = median(series[1].seconds);
                const double best = std::min(serial1, serialP);
                auto simulatedFor = [&](const Series& s) {
                    return (s.name == "hybrid" ? hybrid : plan).simulation.makespan;
                };
                if (o.json) {
                    nlohmann::json runs = nlohmann::json::array();
                    for (const Series& s : series) {
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
                            row["simulated_ms"] = simulatedFor(s) * 1e3;
                        }
                        if (s.name == "parallel")
                            row["simulated_solo_costs_ms"] = soloPrediction * 1e3;
                        runs.push_back(row);
                    }
                    const HybridReport& h = hybrid.hybrid;
                    nlohmann::json hybridJson = {{"threads", h.threads},
                                                 {"cuts", h.cuts},
                                                 {"stretches", h.stretches},
                                                 {"stretches_moved", h.stretchesMoved},
                                                 {"threaded_instances", h.threadedInstances},
                                                 {"one_worker", h.oneWorker},
                                                 {"simulated_before_ms", h.makespanBefore * 1e3},
                                                 {"simulated_after_ms", h.makespanAfter * 1e3}};
                    if (!h.skipped.empty())
                        hybridJson["skipped"] = h.skipped;
                    std::cout << nlohmann::json{{"schema", "ramiel.bench/1"},
                                                {"model", a->model.path},
                                                {"algorithm", o.algorithm},
                                                {"workers", P},
                                                {"batch", o.batch},
                                                {"degree", o.degree},
                                                {"cost_source", costSource},
                                                {"runs_each", opts->runs},
                                                {"speedup_bound", bound},
                                                {"hybrid", hybridJson},
                                                {"runs", runs}}
                                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                              << "\n";
                    return 0;
                }
                std::cout << printable(a->model.path) << ": batch " << o.batch << ", " << opts->runs
                          << " runs each (in turns of " << std::min(kBlock, opts->runs) << " after a warm-up run), "
                          << costSource << " costs\n";
                for (const Series& s : series) {
                    char line[200];
                    std::snprintf(line, sizeof line, "  %-9s %2d thread%s x %2d worker%s  median %9s  (p25 %s, p75 %s)\n",
                                  s.name.c_str(), s.threads, s.threads == 1 ? " " : "s", s.workers,
                                  s.workers == 1 ? " " : "s", formatSeconds(median(s.seconds)).c_str(),
                                  formatSeconds(quantile(s.seconds, 0.25)).c_str(),
                                  formatSeconds(quantile(s.seconds, 0.75)).c_str());
                    std::cout << line;
                }
                for (const Series& s : series) {
                    if (s.name == "serial")
                        continue;
                    const double t = median(s.seconds), simulated = simulatedFor(s);
                    std::cout << "  " << s.name << " (" << o.algorithm << ", P = " << P << ", d = " << o.degree
                              << "): " << formatFixed(serial1 / t, 2) << "x over serial 1 thread (inter-op bound "
                              << formatFixed(bound, 2) << "x), " << formatFixed(best / t, 2)
                              << "x over the best serial; simulated " << formatSeconds(simulated) << " ("
                              << formatFixed(100.0 * (simulated - t) / t, 1) << "%)\n";
                }
                if (measured)
                    std::cout << "  (simulated with per-node costs measured inside the parallel run; with costs measured "
                                 "alone the parallel schedule simulates at "
                              << formatSeconds(soloPrediction) << ")\n";
                const HybridReport& h = hybrid.hybrid;
                if (h.applied())
                    std::cout << "  hybrid: " << h.cuts << " cut nodes, " << h.stretchesMoved << " of " << h.stretches
                              << " stretches onto one worker, " << h.threadedInstances << " nodes on " << h.threads
                              << " threads" << (h.oneWorker ? " (all on one worker: serial on every core)" : "") << "\n";
                else
                    std::cout << "  hybrid: not used ("
                              << (h.skipped.empty() ? "no cut or stretch gains in simulation" : h.skipped) << ")\n";
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
    sub->add_option("-b,--batch", o->batch, "Samples per run")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("--threads", o->threads, "Intra-op threads (default 1: what each parallel worker uses)")
        ->check(CLI::PositiveNumber);
    sub->add_option("--threaded", o->threaded,
                    "Also measure every node on this many intra-op threads (for hybrid schedules: ramiel cluster --hybrid)")
        ->check(CLI::Range(2, 1024));
    sub->add_option("--runs", o->runs, "Timed runs")->capture_default_str()->check(CLI::PositiveNumber);
    return {sub, [o] {
                const Model model = loadModel(o->model);
                const auto compiled = runtime().compile(model);
                compiled->setInputs(compiled->randomInputs(o->batch, 1));
                const int threads = o->threads;
                const MeasuredCosts m = profileNodes(*compiled, model.graph.nodeCount(), o->batch, o->runs, threads);
                MeasuredCosts threaded;
                if (o->threaded > 1)
                    threaded = profileNodes(*compiled, model.graph.nodeCount(), o->batch, o->runs, o->threaded);
                writeMeasuredCosts(o->output, model.graph, m, o->threaded > 1 ? &threaded : nullptr);
                double sum = 0;
                for (double s : m.nodeSeconds)
                    sum += s;
                std::cout << printable(model.path) << ": " << model.graph.nodeCount() << " nodes, median run "
                          << formatSeconds(m.medianTotal) << " (" << threads << " thread" << (threads == 1 ? "" : "s")
                          << ", batch " << o->batch << ", " << o->runs << " runs); node medians sum to "
                          << formatSeconds(sum);
                if (o->threaded > 1)
                    std::cout << "; on " << o->threaded << " threads, median run " << formatSeconds(threaded.medianTotal);
                std::cout << "\n  wrote " << o->output << "\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
