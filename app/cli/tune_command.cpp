// ramiel tune MODEL.onnx: the measured search of core/pipeline/tune.h, as a
// table, and the chosen configuration for --config.
#include "analysis.h"
#include "commands.h"
#include "progress.h"

#include "core/pipeline/tune.h"
#include "core/report/host_report.h"
#include "core/util/text.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace ramiel::cli {

namespace {

struct TuneCliOptions {
    ModelOptions model;
    int cores = 0;
    int batch = 1;
    double budget = 30;
    bool json = false;
    std::string output;
    bool noNodeThreads = false;
    int predict = 0;
};

void printTable(const pipeline::TuneResult& r)
{
    size_t measured = 0;
    for (const auto& c : r.candidates)
        measured += c.measuredAlone();
    std::cout << printable(r.model) << ": P = " << r.cores << ", batch " << r.batch << "; " << r.candidates.size()
              << " configurations simulated, " << measured << " measured (" << r.runsEach
              << " runs each, each in its own process, in turns); " << formatFixed(r.totalSeconds, 1) << " s (profiling "
              << formatFixed(r.profileSeconds, 1) << " s)\n";
    std::cout << "  " << describeHostAround(r.hostBefore, r.hostAfter) << "\n";
    const double one = r.candidates[r.serialOneThread].median(), best = r.candidates[r.bestSerial].median();
    // Columns as wide as their longest entry.
    int titleWidth = 13, threadsWidth = 17;
    for (const auto* list : {&r.candidates, &r.predictions})
        for (const auto& c : *list) {
            titleWidth = std::max(titleWidth, int(c.config.title().size()));
            threadsWidth = std::max(threadsWidth, int(c.config.threadsText().size()));
        }
    char line[600];
    std::snprintf(line, sizeof line, "  %-*s %-*s %10s %10s %17s %8s %8s\n", titleWidth, "configuration", threadsWidth,
                  "workers x threads", "simulated", "measured", "(p25-p75)", "vs 1t", "vs best");
    std::cout << line;
    size_t shown = 0;
    for (size_t i = 0; i < r.candidates.size(); ++i) {
        const auto& c = r.candidates[i];
        if (!c.measuredAlone() && shown >= measured + 3)
            break;
        ++shown;
        std::string spread, vsOne, vsBest, median = "-";
        if (c.measuredAlone()) {
            std::vector<double> s = c.measured;
            std::sort(s.begin(), s.end());
            median = formatSeconds(c.median());
            spread = "(" + formatSeconds(s[s.size() / 4]) + "-" + formatSeconds(s[s.size() * 3 / 4]) + ")";
            vsOne = formatFixed(one / c.median(), 2) + "x";
            vsBest = formatFixed(best / c.median(), 2) + "x";
        }
        std::snprintf(line, sizeof line, "%s %-*s %-*s %10s %10s %17s %8s %8s\n", i == r.chosen ? "*" : " ",
                      titleWidth, c.config.title().c_str(), threadsWidth, c.config.threadsText().c_str(),
                      formatSeconds(c.simulated).c_str(),
                      median.c_str(), spread.c_str(), vsOne.c_str(), vsBest.c_str());
        std::cout << line;
    }
    if (shown < r.candidates.size())
        std::cout << "  (" << r.candidates.size() - shown << " more, slower in simulation; --json lists them all)\n";
    std::cout << "  " << r.verdict << "\n";
    if (!r.note.empty())
        std::cout << "  note: " << r.note << "\n";
    if (r.predictions.empty())
        return;
    std::cout << "predicted for P = " << r.predictCores << " (simulated from the costs measured on 1-" << r.cores
              << " threads, a fitted curve beyond; not measured):\n";
    const double oneThread = r.candidates[r.serialOneThread].simulated;
    for (size_t i = 0; i < r.predictions.size() && i < 5; ++i) {
        const auto& c = r.predictions[i];
        std::snprintf(line, sizeof line, "  %-*s %-*s %10s   %.2fx over serial on 1 thread (simulated)\n",
                      titleWidth, c.config.title().c_str(), threadsWidth, c.config.threadsText().c_str(),
                      formatSeconds(c.simulated).c_str(), oneThread / c.simulated);
        std::cout << line;
    }
}

}  // namespace

Command addTuneCommand(CLI::App& app)
{
    auto o = std::make_shared<TuneCliOptions>();
    CLI::App* sub = app.add_subcommand(
        "tune", "Search the ways to run the model on P cores: simulate every candidate with thread-aware measured "
                "costs, measure the best in their own processes, pick the fastest measured");
    addModelOptions(sub, o->model);
    addInputFilesOption(sub, o->model);
    sub->add_option("-p,--cores", o->cores, "Cores P (default: this machine's)")->check(CLI::Range(1, 1024));
    sub->add_option("-b,--batch", o->batch, "Batch B, in samples of the model's own input")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    sub->add_option("--budget", o->budget, "Seconds for profiling and measuring together")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 86400.0));
    sub->add_option("-o,--output", o->output, "Write the chosen configuration here (for --config)");
    sub->add_flag("--no-node-threads", o->noNodeThreads,
                  "Leave out configurations whose nodes choose their own thread counts (the generated code "
                  "cannot run those yet)");
    sub->add_option("--predict", o->predict,
                    "Also predict the best configurations for this many cores from the costs measured here "
                    "(simulated, never measured; threads beyond those measured follow a fitted Amdahl curve)")
        ->check(CLI::Range(2, 1024));
    sub->add_flag("--json", o->json, "The whole table and the chosen configuration as JSON");
    return {sub, [o, sub] {
                pipeline::TuneOptions options;
                options.cores = o->cores;
                options.batch = o->batch;
                options.budgetSeconds = o->budget;
                options.shapes = o->model.prepare.shapes;
                options.inputs = o->model.prepare.inputs;
                options.machineFile = o->model.prepare.machineFile;
                // --passes given: only that list; else the default passes and none.
                if (sub->count("--passes"))
                    options.passes = {o->model.prepare.passes};
                options.nodeThreads = !o->noNodeThreads;
                options.predictCores = o->predict;
                options.workerCommand = {"/proc/self/exe", "time-worker"};
                const pipeline::TuneResult r = pipeline::tune(
                    o->model.model, options,
                    [](const std::string& stage, int done, int total) { showProgress(stage, done, total); });
                if (!o->output.empty())
                    pipeline::writeRunConfig(o->output, r.candidates[r.chosen].config);
                if (o->json)
                    std::cout << pipeline::tuneResultToJson(r).dump(2, ' ', false,
                                                                    nlohmann::json::error_handler_t::replace)
                              << "\n";
                else
                    printTable(r);
                if (!o->output.empty() && !o->json)
                    std::cout << "  wrote " << o->output << " (ramiel bench/export --config " << o->output << ")\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
