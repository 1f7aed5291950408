// From an .onnx file to a plan, one stage a function; the CLI and Ramiel
// Studio call these instead of stringing the stages together themselves:
//
//   source   = readModel(path, shapes)           import, checks, shape inference, input sizes
//   prepared = prepare(source, options)          graph passes, topology, machine constants, static costs
//   costs    = costTable(prepared, settings)     static, a measured-cost file, or a run's profile
//   planned  = plan(prepared, settings, costs)   schedule, simulation, validation, what the views draw
//   steps    = teachingSteps(planned)            linear clustering path by path, then each merge
//   state    = teachingState(planned, steps, k)  the clustering at step k, as a schedule
//
// Results are immutable and shared: a plan keeps the model, the topology and
// the costs it was made from alive. Nothing here uses Qt or torch.
#pragma once

#include "core/analysis/cost_model.h"
#include "core/analysis/machine.h"
#include "core/analysis/metrics.h"
#include "core/ir/model.h"
#include "core/ir/topology.h"
#include "core/passes/registry.h"
#include "core/pipeline/options.h"
#include "core/schedule/scheduler.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ramiel::pipeline {

// The passes a model is prepared with unless told otherwise: those the registry marks on by
// default. Every CLI command, Studio, `ramiel tune` and configuration files start from it.
inline const std::string kDefaultPasses = "default";

struct PrepareOptions {
    std::vector<std::string> shapes;      // input sizes, NAME=d1,d2,... (--shape)
    std::string passes = kDefaultPasses;  // a --passes list: "none", "default", "all" or names
    std::string machineFile;              // machine constants; empty: this machine's calibration
    std::vector<std::string> inputs;      // graph inputs read from files, NAME=FILE.npy (--input); others random
};

// A model ready for planning: the graph after the passes, its topology and
// static costs. The model as read is kept, so passes can change without
// reading the file again.
struct PreparedModel {
    std::string path;
    std::shared_ptr<const Model> source;  // as read from the file
    std::vector<std::string> passes;      // the passes run, in table order
    std::vector<std::pair<std::string, passes::PassStats>> passStats;
    std::vector<std::string> inputFiles;  // PrepareOptions::inputs: what its runs read (run_inputs.h)
    Model model;
    Topology topo;
    MachineConstants machine;
    std::vector<NodeCost> staticCosts;
    std::vector<double> staticSeconds;  // by node id, one sample
    GraphMetrics staticMetrics;         // with the static costs
    double readSeconds = 0;             // import, shape inference, checks
    double prepareSeconds = 0;          // passes, topology, costs
};

// What a symbolic batch becomes on import: one sample (planning and running
// need sizes; `-b` counts samples) or left as the file declares it (a model
// written out again keeps its interface).
enum class SymbolicBatch { OneSample, AsDeclared };

// Import with the input sizes fixed: by `shapes` (--shape), else, for inputs the model leaves
// open, by the sizes of the files runs will read them from (`inputFiles`, --input; those
// files read here). Throws ramiel::Error.
std::shared_ptr<const Model> readModel(const std::string& path, const std::vector<std::string>& shapes = {},
                                       SymbolicBatch batch = SymbolicBatch::OneSample,
                                       const std::vector<std::string>& inputFiles = {});
// Import and passes: the model as the runtime runs it (no costs, no calibration).
Model loadModel(const std::string& path, const PrepareOptions& options);
// Runs the passes on a copy of `source` and prepares it. Throws Error(Usage) for a bad pass list.
std::shared_ptr<const PreparedModel> prepare(std::shared_ptr<const Model> source, const PrepareOptions& options,
                                             double readSeconds = 0);
// readModel + prepare; a bad pass list fails before the file is read.
std::shared_ptr<const PreparedModel> prepare(const std::string& path, const PrepareOptions& options);

// Node costs for planning: settings.costs is "static", a measured-cost file,
// or "measured": `profile`, per-sample seconds by node id from a run. Nodes a
// measured table lacks keep static costs and are listed in `missing`.
struct Costs {
    std::shared_ptr<const CostTable> table;
    bool measured = false;
    std::vector<std::string> missing;
};
Costs costTable(const PreparedModel& prepared, const PlanSettings& settings, const std::vector<double>& profile = {});

// A schedule of a prepared model and everything shown about it.
struct PlannedModel {
    std::shared_ptr<const PreparedModel> prepared;
    PlanSettings settings;
    Costs costs;
    SchedulingProblem problem;   // points into `prepared` and `costs`
    Plan plan;
    std::vector<double> nodeSeconds;    // by node id at one sample: the costs in use (NaN: unknown)
    GraphMetrics metrics;               // with those costs
    std::vector<double> loads;          // by cluster
    double bound = 0;                   // serial / max(span, work / P): the most this schedule could gain
    // By graph copy (d of them), then node id: the owner cluster, the clones
    // in other clusters, and the cross-cluster edges by node pair.
    std::vector<std::vector<int>> clusterOfNode;
    std::vector<std::vector<int>> cloneCount;
    std::vector<std::set<std::pair<NodeId, NodeId>>> crossClusterEdges;
    std::set<std::pair<NodeId, NodeId>> criticalEdges;
    std::vector<bool> onCriticalPath;  // by node id
    double seconds = 0;                // time to plan all this
};

// The scheduling problem of `settings` on the prepared model. Throws Error(Usage) for bad settings.
SchedulingProblem problemOf(const PreparedModel& prepared, const CostTable& costs, const PlanSettings& settings);
// Plans with settings.algorithm. `gantt`: keep the simulated Gantt chart.
std::shared_ptr<const PlannedModel> plan(std::shared_ptr<const PreparedModel> prepared, const PlanSettings& settings,
                                         Costs costs, bool gantt = true);
// A given schedule (a run configuration's: scheduleFor) instead of a planned
// one, simulated with `costs` and described as `plan` does; P is its worker count.
std::shared_ptr<const PlannedModel> planWithSchedule(std::shared_ptr<const PreparedModel> prepared,
                                                     const PlanSettings& settings, Costs costs, Schedule schedule,
                                                     bool gantt = true);

// Linear clustering as taught: the peeled paths (heaviest first), then the
// merges down to P that the linear scheduler makes of them, in order.
struct TeachingSteps {
    int samples = 1;
    std::vector<std::vector<NodeId>> paths;
    std::vector<double> pathSeconds;
    std::vector<std::pair<int32_t, int32_t>> merges;  // (from, into) path indices
    int freeMerges = 0;
};
TeachingSteps teachingSteps(const PlannedModel& planned);

// The clustering at one step of the teaching (0 <= step < paths + merges), as
// a schedule to simulate and chart. While peeling (step k): paths 0..k are
// clusters 0..k and the nodes not yet clustered share one last cluster. After
// merge j: one cluster per group, in the order of the path that heads it.
struct TeachingState {
    Schedule schedule;                // degree 1, at steps.samples per node
    std::vector<int> clusterOfNode;   // by node id: the heading path's index; -1: not clustered yet
    std::vector<int> clusterColors;   // by schedule cluster: the same index; -1: the nodes not yet clustered
    std::vector<NodeId> current;      // the path peeled, or the nodes the merge moved
    double currentSeconds = 0;        // their cost
    int groups = 0;                   // clusters so far (the not yet clustered nodes not counted)
};
TeachingState teachingState(const PlannedModel& planned, const TeachingSteps& steps, int step);
// That state simulated and described as plan() describes a plan (Gantt, loads).
std::shared_ptr<const PlannedModel> teachingPlan(const PlannedModel& planned, const TeachingSteps& steps,
                                                 const TeachingState& state);

// A subgraph (an If/Loop/Scan body) prepared for drawing: its own topology and
// static costs, the parent's machine constants, no passes. `name` names it
// (shown as its path).
std::shared_ptr<const PreparedModel> prepareSubgraph(const PreparedModel& parent, const Graph& body,
                                                     const std::string& name);

}  // namespace ramiel::pipeline
