// The schedulers behind one interface, and the planning pipeline:
//   schedule = algorithm(problem)      clusters, at most P after merging
//   schedule = cloneCheapNodes(...)    if problem.clone
//   schedule = makeHybrid(...)         if problem.hybridThreads > 1
//   simulate + validate + cross edges  for the report
#pragma once

#include "core/schedule/cloning.h"
#include "core/schedule/hybrid.h"
#include "core/schedule/hyperclustering.h"
#include "core/schedule/merging.h"
#include "core/schedule/simulator.h"
#include "core/schedule/validator.h"

#include <functional>
#include <string>
#include <vector>

namespace ramiel {

struct SchedulerOutput {
    Schedule schedule;
    MergeReport merges;
    HyperclusterReport hyper;
};

struct SchedulerInfo {
    std::string name;
    std::string summary;
    std::function<SchedulerOutput(const SchedulingProblem&)> run;
};

// Every scheduler, in the order the CLI and the GUI list them.
const std::vector<SchedulerInfo>& schedulers();
// Throws Error(Usage) naming the known ones.
const SchedulerInfo& findScheduler(const std::string& name);

struct Plan {
    Schedule schedule;
    MergeReport merges;
    HyperclusterReport hyper;
    CloneReport clones;
    HybridReport hybrid;
    Simulation simulation;
    Validation validation;
    std::vector<CrossEdge> crossEdges;
    double span = 0;           // T-inf of one copy at its sub-batch (edge costs 0): a lower bound
    double work = 0;           // all instances' costs: makespan >= work / P
    double planningSeconds = 0;
};

Plan planSchedule(const SchedulingProblem& problem, const std::string& algorithm, bool withGantt = false);
// The figures of `plan.schedule` on `problem`'s costs: simulation, validation,
// hand-offs, span and work (planSchedule's last step; also for a given schedule).
void measurePlan(Plan& plan, const SchedulingProblem& problem, bool withGantt = false);

// Intra-op threads per worker for a plan on `cores` cores: one each, and the
// cores no cluster uses go to the cluster with the largest load (the critical
// one), which then runs its operators on several threads (a simple hybrid of
// inter- and intra-operator parallelism).
std::vector<int> threadsPerWorker(const Plan& plan, const CostTable& costs, int cores);

// Linear clustering of one copy at `samples` per node, merged to at most
// `workers` clusters; node lists heaviest first. `merges` gets the counts and
// the merge steps, in terms of linearClusters' order.
std::vector<std::vector<NodeId>> clusterOneCopy(const CostTable& costs, int samples, int workers,
                                                MergeReport* merges = nullptr);

}  // namespace ramiel
