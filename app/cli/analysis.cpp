#include "analysis.h"

#include "core/onnx/onnx_import.h"
#include "core/passes/registry.h"
#include "core/runtime/runtime.h"

#include <algorithm>
#include <thread>

namespace ramiel::cli {

void addModelOptions(CLI::App* sub, ModelOptions& o)
{
    sub->add_option("model", o.model, "The .onnx file")->required();
    sub->add_option("--shape", o.shapes,
                    "Fix an input's dimensions, NAME=d1,d2,... (repeatable), for models with symbolic sizes");
    sub->add_option("--machine", o.machineFile,
                    "Machine constants for the cost model (JSON from 'ramiel calibrate -o'); "
                    "default: the calibration cached for this CPU");
    sub->add_option("--passes", o.passes,
                    "Graph optimization passes to run first: 'none', 'default', 'all' or a comma list "
                    "(ramiel optimize --list-passes; cloning stays under --no-clone)")
        ->capture_default_str();
}

void addCostOptions(CLI::App* sub, CostOptions& o)
{
    sub->add_option("--costs", o.costs,
                    "Node costs: 'static' (cost model) or a measured-cost JSON file (docs/scheduling.md)")
        ->capture_default_str();
    sub->add_option("--latency", o.latencyMicroseconds,
                    "Fixed cost of a value crossing clusters, in microseconds (plus bytes / bandwidth); "
                    "default: the hand-off time calibrated for this machine")
        ->check(CLI::NonNegativeNumber);
}

Model loadModel(const ModelOptions& m)
{
    ImportOptions importOptions;
    for (const std::string& s : m.shapes)
        addInputShape(importOptions, s);
    const std::vector<std::string> passes = passes::parsePassList(m.passes);  // a bad name fails before loading
    Model model = loadOnnx(m.model, importOptions);
    passes::runPipeline(model, passes, {});
    return model;
}

std::unique_ptr<Analysis> loadAnalysis(const ModelOptions& m, const CostOptions& c)
{
    auto a = std::make_unique<Analysis>();
    a->model = loadModel(m);
    a->machine = obtainMachineConstants(m.machineFile);
    a->topo = buildTopology(a->model.graph);
    a->staticCosts = estimateCosts(a->model.graph);
    EdgeCostParameters edges;
    edges.latencySeconds = c.latencyMicroseconds >= 0 ? c.latencyMicroseconds * 1e-6 : a->machine.handoffSeconds;
    edges.bytesPerSecond = a->machine.bytesPerSecond;
    CostTable table = CostTable::fromStatic(a->model.graph, a->topo, a->staticCosts, a->machine, edges);
    if (c.costs != "static")
        table = CostTable::fromMeasured(c.costs, a->model.graph, a->topo, table, &a->missingMeasured);
    a->costs = std::make_unique<CostTable>(std::move(table));
    return a;
}

int coresOf(const PlanOptions& o) { return o.cores > 0 ? o.cores : std::max(1, int(std::thread::hardware_concurrency())); }

void addPlanOptions(CLI::App* sub, PlanOptions& o)
{
    addModelOptions(sub, o.model);
    addCostOptions(sub, o.costs);
    sub->add_option("-p,--cores", o.cores, "Worker threads P (default: this machine's cores)")
        ->check(CLI::PositiveNumber);
    sub->add_option("-b,--batch", o.batch, "Batch B, in samples of the model's own input")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("-d,--degree", o.degree, "Hypercluster degree d: sub-batches run as graph copies (1..B)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_flag("--no-clone", o.noClone, "Do not clone cheap nodes into consumer clusters");
    sub->add_flag("--no-switching", o.noSwitching, "Hyperclustering without switching (cluster i of each copy on worker i)");
    sub->add_flag("--hybrid", o.hybrid,
                  "Hybrid schedule: the graph's serial parts run on P intra-op threads (needs measured costs "
                  "on P threads: ramiel profile --threaded P)");
    sub->add_flag("--json", o.json, "Print JSON (schema in docs/json.md)");
}

SchedulingProblem problemFor(const Analysis& a, const PlanOptions& o)
{
    SchedulingProblem p = SchedulingProblem::of(a.model.graph, a.topo, *a.costs, coresOf(o),
                                                o.batch, o.degree);
    p.clone = !o.noClone;
    p.switching = !o.noSwitching;
    p.hybridThreads = o.hybrid ? p.workers : 1;
    p.check();
    return p;
}

}  // namespace ramiel::cli
