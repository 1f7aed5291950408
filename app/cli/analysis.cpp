#include "analysis.h"

#include "core/util/error.h"
#include "core/util/text.h"

#include <iostream>
#include <type_traits>

namespace ramiel::cli {

namespace {

// "unknown algorithm 'x' (known: a, b)" for a value outside an option's choices.
CLI::Validator oneOf(const pipeline::PlanOption& option)
{
    return CLI::Validator(
        [option](std::string& value) {
            for (const std::string& c : option.choices)
                if (c == value)
                    return std::string();
            std::string known;
            for (const std::string& c : option.choices)
                known += (known.empty() ? "" : ", ") + c;
            return "unknown " + option.name + " '" + value + "' (known: " + known + ")";
        },
        "");
}

}  // namespace

void addModelOptions(CLI::App* sub, ModelOptions& o, bool withPasses)
{
    sub->add_option("model", o.model, "The .onnx file")->required();
    sub->add_option("--shape", o.prepare.shapes,
                    "Fix an input's dimensions, NAME=d1,d2,... (repeatable), for models with symbolic sizes "
                    "(a symbolic batch alone needs none: it is read as one sample)");
    sub->add_option("--machine", o.prepare.machineFile,
                    "Machine constants for the cost model (JSON from 'ramiel calibrate -o'); "
                    "default: the calibration cached for this CPU");
    if (withPasses)
        sub->add_option("--passes", o.prepare.passes,
                        "Graph optimization passes to run first: 'none', 'default', 'all' or a comma list "
                        "(ramiel optimize --list-passes)")
            ->capture_default_str();
}

void addInputFilesOption(CLI::App* sub, ModelOptions& o)
{
    sub->add_option("--input", o.prepare.inputs, "An input from a NumPy file, NAME=FILE.npy (repeatable); others are random");
}

void addPlanOptions(CLI::App* sub, PlanOptions& o, const std::set<std::string>& skip)
{
    addModelOptions(sub, o.model);
    pipeline::PlanSettings& s = o.settings;
    for (const pipeline::PlanOption& option : pipeline::planOptions()) {
        if (skip.count(option.name))
            continue;
        std::visit(
            [&](auto field) {
                using T = std::remove_reference_t<decltype(s.*field)>;
                if constexpr (std::is_same_v<T, bool>) {
                    const bool value = !option.negated;
                    sub->add_flag_callback(option.flags, [&s, field, value] { s.*field = value; }, option.help);
                } else if constexpr (std::is_same_v<T, int>) {
                    auto* added = sub->add_option(option.flags, s.*field, option.help)
                                      ->check(CLI::Range(option.minimum, option.maximum));
                    if (s.*field > 0)  // 0 means "this machine's": no number to show
                        added->capture_default_str();
                } else if constexpr (std::is_same_v<T, double>) {
                    sub->add_option(option.flags, s.*field, option.help)->check(CLI::NonNegativeNumber);
                } else {
                    auto* added = sub->add_option(option.flags, s.*field, option.help)->capture_default_str();
                    if (!option.choices.empty())
                        added->check(oneOf(option));
                }
            },
            option.field);
    }
    sub->add_flag("--json", o.json, "Print JSON (schema in docs/json.md)");
}

std::shared_ptr<const pipeline::PreparedModel> prepareModel(const ModelOptions& o)
{
    return pipeline::prepare(o.model, o.prepare);
}

std::string unknownCostsRemedy(const GraphMetrics& metrics)
{
    switch (metrics.unknownCosts) {
    case GraphMetrics::UnknownCosts::InputSizes:
        return "the inputs' sizes are not all known: give them with --shape NAME=d1,d2,...";
    case GraphMetrics::UnknownCosts::DataDependent:
        return "their sizes depend on the data: 'ramiel profile' measures every node, and --costs FILE plans with "
               "those times";
    case GraphMetrics::UnknownCosts::NotInferred:
        return "shape inference could not size them: where the model runs, 'ramiel profile' measures every node, "
               "and --costs FILE plans with those times";
    case GraphMetrics::UnknownCosts::None: break;
    }
    return {};
}

void warnMissingCosts(const pipeline::PreparedModel& prepared, const pipeline::Costs& costs)
{
    if (!costs.missing.empty())
        std::cerr << "ramiel: warning: the measured-cost table lacks " << costs.missing.size() << " nodes (e.g. '"
                  << printable(costs.missing.front()) << "'); they keep static costs\n";
    const GraphMetrics& m = prepared.staticMetrics;
    if (!costs.measured && !m.costsComplete())
        std::cerr << "ramiel: warning: " << m.unknownCostNodes.size() << " nodes have no static cost (e.g. '"
                  << printable(prepared.model.graph.node(m.unknownCostNodes.front()).name)
                  << "') and count 0 in the simulated figures; " << unknownCostsRemedy(m) << "\n";
}

}  // namespace ramiel::cli
