// ramiel export MODEL.onnx --lang python|cpp -o DIR: plan a schedule and
// write readable parallel code for it (docs/codegen.md).
#include "analysis.h"
#include "commands.h"

#include "core/codegen/codegen.h"
#include "core/pipeline/run_config.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <optional>

namespace ramiel::cli {

namespace {

struct ExportOptions {
    PlanOptions plan;
    std::string config;  // a run configuration (ramiel tune -o) instead of planning
    std::string language;
    std::string outputDir;
};

}  // namespace

Command addExportCommand(CLI::App& app, const std::vector<std::string>& arguments)
{
    auto opts = std::make_shared<ExportOptions>();
    PlanOptions& o = opts->plan;
    CLI::App* sub = app.add_subcommand(
        "export", "Write readable parallel code for the model: Python+PyTorch (run.py) or C++/libtorch (main.cpp)");
    addPlanOptions(sub, o);
    sub->add_option("--lang", opts->language, "python or cpp")->required()->check(CLI::IsMember({"python", "cpp"}));
    sub->add_option("-o,--output", opts->outputDir, "The folder to write (created if missing)")->required();
    sub->add_option("--config", opts->config,
                    "Generate code for this run configuration ('ramiel tune -o FILE') instead of planning; its "
                    "passes, batch, schedule and threads replace the options");
    return {sub, [opts, sub, arguments] {
                PlanOptions o = opts->plan;
                const CodeLanguage language = codeLanguageFromName(opts->language);
                std::optional<pipeline::RunConfig> config;
                if (!opts->config.empty()) {
                    config = pipeline::readRunConfig(opts->config);
                    o.model.prepare = pipeline::prepareOptionsOf(*config, o.model.prepare);
                    o.settings = config->settings;
                    o.settings.hybrid = false;  // its schedule says which nodes use more threads
                }
                const pipeline::PlanSettings& s = o.settings;
                if (s.hybrid)
                    throw Error(ErrorKind::Usage, {}, "--hybrid: the generated code runs each worker on a fixed "
                                                      "thread count; hybrid schedules run in 'ramiel bench' (plan one with 'ramiel cluster --hybrid')");
                const auto prepared = prepareModel(o.model);
                Schedule schedule;
                double bound = 0;
                std::optional<pipeline::Costs> planCosts;  // what the plan used, warned about once the code is written
                if (config) {
                    schedule = pipeline::scheduleFor(*config, *prepared, opts->config);
                    if (!schedule.threads.empty() &&
                        std::any_of(schedule.threads.begin(), schedule.threads.end(), [](int32_t t) { return t > 0; }))
                        throw Error(ErrorKind::Usage, opts->config,
                                    "the configuration (" + config->label() +
                                        ") gives single nodes their own thread counts, which the generated code "
                                        "does not do yet (tune with --no-node-threads for one it can)");
                    // The bound with the costs it names ("measured" ones are gone with the run that measured them).
                    if (s.costs != "measured")
                        bound = pipeline::planWithSchedule(prepared, s, pipeline::costTable(*prepared, s), schedule, false)->bound;
                } else {
                    planCosts = pipeline::costTable(*prepared, s);
                    const auto planned = pipeline::plan(prepared, s, *planCosts, false);
                    schedule = planned->plan.schedule;
                    bound = planned->bound;
                }
                const int workers = int(schedule.clusters.size());
                CodegenRequest request;
                request.model = &prepared->model;
                request.topo = &prepared->topo;
                request.schedule = &schedule;
                request.language = language;
                request.outputDir = opts->outputDir;
                request.bound = bound;
                // As typed, with the passes the default chose made explicit, so that it makes this code again.
                std::vector<std::string> command = {"ramiel"};
                command.insert(command.end(), arguments.begin(), arguments.end());
                if (!config && sub->count("--passes") == 0)
                    command.insert(command.end(), {"--passes", o.model.prepare.passes});
                request.command = shellWords(command);
                const CodegenResult r = generateCode(request);
                if (planCosts)
                    warnMissingCosts(*prepared, *planCosts);
                if (o.json) {
                    nlohmann::json files = nlohmann::json::array();
                    for (const std::string& f : r.files)
                        files.push_back(f);
                    std::cout << nlohmann::json{{"schema", "ramiel.export/1"},
                                                {"model", prepared->path},
                                                {"language", opts->language},
                                                {"clusters", schedule.clusters.size()},
                                                {"slots", r.slots},
                                                {"weights", r.weights},
                                                {"weight_bytes", r.weightBytes},
                                                {"speedup_bound", bound},
                                                {"files", files}}
                                     .dump(2)
                              << "\n";
                    return 0;
                }
                std::cout << printable(prepared->path) << ": " << opts->language << " code for " << s.algorithm << " on "
                          << workers << " workers, batch " << s.batch << ", " << s.degree
                          << (s.degree == 1 ? " copy" : " copies") << ": " << schedule.clusters.size()
                          << " clusters, " << r.slots << " cross-cluster values, " << r.weights << " weights ("
                          << formatBytes(double(r.weightBytes)) << "); speedup bound "
                          << formatFixed(bound, 2) << "x\n";
                for (const std::string& f : r.files)
                    std::cout << "  wrote " << printable(f) << "\n";
                if (language == CodeLanguage::Python)
                    std::cout << "run: /usr/bin/python3 " << printable(opts->outputDir) << "/run.py (or import "
                              << printable(opts->outputDir) << "/model.py)\n";
                else
                    std::cout << "build: cmake -S " << printable(opts->outputDir) << " -B " << printable(opts->outputDir)
                              << "/build && cmake --build " << printable(opts->outputDir) << "/build && "
                              << printable(opts->outputDir) << "/build/model\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
