// What the analysis commands share: load a model with --shape fixes, pick the
// machine constants, and build the cost table (static or measured).
#pragma once

#include "core/analysis/metrics.h"
#include "core/ir/topology.h"
#include "core/schedule/schedule.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace ramiel::cli {

struct ModelOptions {
    std::string model;
    std::vector<std::string> shapes;
    std::string machineFile;
    std::string passes = "none";  // graph passes run after loading (core/passes/registry.h)
};

struct CostOptions {
    std::string costs = "static";  // or a measured-cost JSON file
    double latencyMicroseconds = -1;  // < 0: the machine's measured hand-off
};

// What cluster, compare and bench share: the model, costs and the problem.
struct PlanOptions {
    ModelOptions model;
    CostOptions costs;
    std::string algorithm = "linear";
    int cores = 0;  // 0: this machine's cores
    int batch = 1;
    int degree = 1;
    bool noClone = false;
    bool noSwitching = false;
    bool hybrid = false;
    bool json = false;
    bool gantt = false;
};

// Registers MODEL, --shape, --machine and --passes on a subcommand.
void addModelOptions(CLI::App* sub, ModelOptions& o);
// Registers --costs and --latency.
void addCostOptions(CLI::App* sub, CostOptions& o);

// A loaded model with everything the analyses need. Not copyable: the cost
// table points at the topology.
struct Analysis {
    Model model;
    MachineConstants machine;
    Topology topo;
    std::vector<NodeCost> staticCosts;
    std::unique_ptr<CostTable> costs;
    std::vector<std::string> missingMeasured;  // nodes a measured table lacks
};

// The model with the --shape fixes applied and the --passes run.
Model loadModel(const ModelOptions& m);
std::unique_ptr<Analysis> loadAnalysis(const ModelOptions& m, const CostOptions& c);

// Registers the model and cost options, -p, -b, -d, --no-clone, --no-switching, --hybrid, --json.
void addPlanOptions(CLI::App* sub, PlanOptions& o);
// P from --cores, or this machine's cores.
int coresOf(const PlanOptions& o);
// The scheduling problem the options describe; throws Error(Usage).
SchedulingProblem problemFor(const Analysis& a, const PlanOptions& o);

}  // namespace ramiel::cli
