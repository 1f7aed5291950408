// ramiel optimize MODEL.onnx -o OUT.onnx: run the graph optimization passes
// (the registry's table, core/passes/registry.cpp) and write the result as ONNX.
#include "analysis.h"
#include "commands.h"

#include "core/onnx/onnx_export.h"
#include "core/passes/ir_dump.h"
#include "core/passes/registry.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

namespace ramiel::cli {

namespace {

struct OptimizeOptions {
    ModelOptions model;
    std::string output;
    std::string passes = pipeline::kDefaultPasses;
    std::string dumpAfter;
    bool listPasses = false;
    bool fixedBatch = false;
    bool json = false;
};

}  // namespace

Command addOptimizeCommand(CLI::App& app)
{
    auto o = std::make_shared<OptimizeOptions>();
    CLI::App* sub = app.add_subcommand("optimize", "Run graph optimization passes and write the optimized model as ONNX");
    sub->add_option("model", o->model.model, "The .onnx file");
    sub->add_option("--shape", o->model.prepare.shapes,
                    "Fix an input's dimensions, NAME=d1,d2,... (repeatable), for models with symbolic sizes "
                    "(a symbolic batch it does not name stays symbolic in the model written)");
    sub->add_option("-o,--output", o->output, "Write the optimized model here (ONNX); without it only the report");
    sub->add_option("--passes", o->passes,
                    "Passes to run: 'default', 'all', 'none' or a comma list (run in the table's order; "
                    "see --list-passes)")
        ->capture_default_str();
    sub->add_flag("--list-passes", o->listPasses, "List the passes, in the order they run, and exit");
    sub->add_option("--dump-after", o->dumpAfter, "Print the graph after this pass, or after every pass ('all')");
    sub->add_flag("--fixed-batch", o->fixedBatch,
                  "Let folding bake the inputs' first dimension into constants (the model then runs only at "
                  "that batch size)");
    sub->add_flag("--json", o->json, "Print the per-pass report as JSON");
    return {sub, [o] {
                if (o->listPasses) {
                    std::cout << passes::describePasses();
                    return 0;
                }
                if (o->model.model.empty())
                    throw Error(ErrorKind::Usage, {}, "optimize needs a model (or --list-passes)");
                const std::vector<std::string> names = passes::parsePassList(o->passes);
                if (!o->dumpAfter.empty() && o->dumpAfter != "all") {
                    passes::findPass(o->dumpAfter);
                    if (std::find(names.begin(), names.end(), o->dumpAfter) == names.end())
                        throw Error(ErrorKind::Usage, {}, "--dump-after " + o->dumpAfter + ": that pass is not in --passes");
                }
                // The model written keeps the file's symbolic batch.
                Model model = *pipeline::readModel(o->model.model, o->model.prepare.shapes,
                                                   pipeline::SymbolicBatch::AsDeclared);
                const int before = int(model.graph.nodeCount());
                passes::PassContext context;
                context.batchDynamic = !o->fixedBatch;
                std::function<void(const std::string&, const Model&)> dump;
                if (!o->dumpAfter.empty())
                    dump = [o](const std::string& name, const Model& m) {
                        if (o->dumpAfter == "all" || o->dumpAfter == name)
                            std::cout << "--- after " << name << "\n" << passes::dumpModel(m);
                    };
                const passes::PipelineResult result = passes::runPipeline(model, names, context, dump);
                double total = 0;
                for (const auto& [name, s] : result.stats)
                    total += s.seconds;
                if (!o->output.empty())
                    saveOnnx(model, o->output);

                if (o->json) {
                    nlohmann::json j;
                    j["model"] = model.path;
                    j["nodesBefore"] = before;
                    j["nodesAfter"] = model.graph.nodeCount();
                    j["seconds"] = total;
                    j["output"] = o->output.empty() ? nlohmann::json() : nlohmann::json(o->output);
                    j["passes"] = nlohmann::json::array();
                    for (const auto& [name, s] : result.stats)
                        j["passes"].push_back({{"name", name}, {"nodesBefore", s.nodesBefore},
                                               {"nodesAfter", s.nodesAfter}, {"removed", s.removed},
                                               {"added", s.added}, {"fused", s.fused}, {"seconds", s.seconds},
                                               {"detail", s.detail}});
                    std::cout << j.dump(2) << "\n";
                    return 0;
                }
                std::cout << printable(model.path) << ": " << before << " -> " << model.graph.nodeCount()
                          << " nodes in " << formatSeconds(total) << "\n";
                size_t width = 4;
                for (const auto& [name, s] : result.stats)
                    width = std::max(width, name.size());
                for (const auto& [name, s] : result.stats)
                    std::cout << "  " << name << std::string(width + 2 - name.size(), ' ') << s.nodesBefore << " -> "
                              << s.nodesAfter << "  " << formatSeconds(s.seconds) << "  " << s.detail << "\n";
                if (!o->output.empty())
                    std::cout << "wrote " << printable(o->output) << "\n";
                return 0;
            }};
}

}  // namespace ramiel::cli
