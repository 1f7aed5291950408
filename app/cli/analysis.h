// The options the model-loading commands share, registered on CLI11 from the
// core's declarations: the model and its preparation (--shape, --machine,
// --passes) and the plan options table (core/pipeline/options.h).
#pragma once

#include "core/pipeline/pipeline.h"
#include "core/runtime/runtime.h"

#include <CLI/CLI.hpp>

#include <set>
#include <string>
#include <vector>

namespace ramiel::cli {

struct ModelOptions {
    std::string model;
    pipeline::PrepareOptions prepare;
};

// What cluster, compare, bench and export share.
struct PlanOptions {
    ModelOptions model;
    pipeline::PlanSettings settings;
    bool json = false;
    bool gantt = false;
};

// Registers MODEL, --shape and --machine; --passes too unless `withPasses` is false.
void addModelOptions(CLI::App* sub, ModelOptions& o, bool withPasses = true);
// Registers the model options, every plan option except those in `skip`, and --json.
void addPlanOptions(CLI::App* sub, PlanOptions& o, const std::set<std::string>& skip = {});

// Registers --input NAME=FILE.npy (repeatable) into o.prepare.inputs: the inputs runs of the
// model read from files (core/pipeline/run_inputs.h).
void addInputFilesOption(CLI::App* sub, ModelOptions& o);

// pipeline::prepare for the options given.
std::shared_ptr<const pipeline::PreparedModel> prepareModel(const ModelOptions& o);
// What to do about nodes without a cost (metrics.unknownCosts): set the inputs' sizes, or
// measure the nodes (sizes that depend on the data or that shape inference could not give);
// empty where every node has one.
std::string unknownCostsRemedy(const GraphMetrics& metrics);
// Warns on stderr when a measured-cost table lacks nodes, or when static costs leave nodes
// without a cost (they count 0 in the simulated figures).
void warnMissingCosts(const pipeline::PreparedModel& prepared, const pipeline::Costs& costs);

}  // namespace ramiel::cli
