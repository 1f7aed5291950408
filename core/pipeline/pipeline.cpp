#include "core/pipeline/pipeline.h"

#include "core/onnx/onnx_import.h"
#include "core/pipeline/run_inputs.h"
#include "core/runtime/runtime.h"
#include "core/schedule/linear_clustering.h"
#include "core/util/error.h"
#include "core/util/npy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <string>

namespace ramiel::pipeline {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Who owns each node, the clones and the cross-cluster edges, per graph copy.
void mapClusters(PlannedModel& p)
{
    const Schedule& s = p.plan.schedule;
    const size_t nodes = p.prepared->model.graph.nodeCount();
    const size_t copies = size_t(std::max(1, s.degree));
    p.clusterOfNode.assign(copies, std::vector<int>(nodes, -1));
    p.cloneCount.assign(copies, std::vector<int>(nodes, 0));
    p.crossClusterEdges.resize(copies);
    for (size_t i = 0; i < s.instanceCount(); ++i)
        p.clusterOfNode[size_t(s.copy(InstanceId(i)))][size_t(s.node(InstanceId(i)))] = s.owner[i];
    for (size_t c = 0; c < s.clusters.size(); ++c)
        for (InstanceId i : s.clusters[c])
            if (s.isClone(c, i))
                ++p.cloneCount[size_t(s.copy(i))][size_t(s.node(i))];
    for (const CrossEdge& e : p.plan.crossEdges)
        if (s.copy(e.from) == s.copy(e.to))
            p.crossClusterEdges[size_t(s.copy(e.to))].insert({s.node(e.from), s.node(e.to)});
}

void mapCriticalPath(PlannedModel& p)
{
    p.onCriticalPath.assign(p.prepared->model.graph.nodeCount(), false);
    const std::vector<NodeId>& path = p.metrics.criticalPath;
    for (size_t k = 0; k < path.size(); ++k) {
        p.onCriticalPath[size_t(path[k])] = true;
        if (k + 1 < path.size())
            p.criticalEdges.insert({path[k], path[k + 1]});
    }
}

}  // namespace

std::shared_ptr<const Model> readModel(const std::string& path, const std::vector<std::string>& shapes,
                                       SymbolicBatch batch, const std::vector<std::string>& inputFiles)
{
    ImportOptions importOptions;
    importOptions.oneSampleForSymbolicBatch = batch == SymbolicBatch::OneSample;
    for (const std::string& s : shapes)
        addInputShape(importOptions, s);
    importOptions.openInputSizes = [files = parseInputFiles(inputFiles)](const std::string& name) {
        const auto it = files.find(name);
        return it == files.end() ? std::nullopt : std::optional<std::vector<int64_t>>(readNpyHeader(it->second).dims);
    };
    return std::make_shared<const Model>(loadOnnx(path, importOptions));
}

Model loadModel(const std::string& path, const PrepareOptions& options)
{
    const std::vector<std::string> passes = passes::parsePassList(options.passes);  // a bad name fails before loading
    Model model = *readModel(path, options.shapes, SymbolicBatch::OneSample, options.inputs);
    passes::runPipeline(model, passes, {});
    return model;
}

std::shared_ptr<const PreparedModel> prepare(std::shared_ptr<const Model> source, const PrepareOptions& options,
                                             double readSeconds)
{
    const auto start = std::chrono::steady_clock::now();
    auto p = std::make_shared<PreparedModel>();
    p->path = source->path;
    p->readSeconds = readSeconds;
    p->source = source;
    p->inputFiles = options.inputs;
    p->model = *source;
    p->passes = passes::parsePassList(options.passes);
    if (!p->passes.empty())
        p->passStats = passes::runPipeline(p->model, p->passes, passes::PassContext{}).stats;
    p->topo = buildTopology(p->model.graph);
    p->machine = obtainMachineConstants(options.machineFile);
    p->staticCosts = estimateCosts(p->model.graph);
    p->staticSeconds = costSeconds(p->staticCosts, p->machine);
    p->staticMetrics = computeMetrics(p->model.graph, p->topo, p->staticCosts, p->staticSeconds);
    p->prepareSeconds = secondsSince(start);
    return p;
}

std::shared_ptr<const PreparedModel> prepare(const std::string& path, const PrepareOptions& options)
{
    passes::parsePassList(options.passes);  // a bad name fails before loading
    const auto start = std::chrono::steady_clock::now();
    auto source = readModel(path, options.shapes, SymbolicBatch::OneSample, options.inputs);
    return prepare(source, options, secondsSince(start));
}

Costs costTable(const PreparedModel& prepared, const PlanSettings& settings, const std::vector<double>& profile)
{
    const Graph& graph = prepared.model.graph;
    EdgeCostParameters edges;
    edges.latencySeconds =
        settings.latencyMicroseconds >= 0 ? settings.latencyMicroseconds * 1e-6 : prepared.machine.handoffSeconds;
    edges.bytesPerSecond = prepared.machine.bytesPerSecond;
    Costs out;
    CostTable table = CostTable::fromStatic(graph, prepared.topo, prepared.staticCosts, prepared.machine, edges);
    if (settings.costs == "measured") {
        if (profile.size() != graph.nodeCount())
            throw Error(ErrorKind::Usage, prepared.path,
                        "measured costs come from a run of this model ('ramiel profile -o FILE' writes a table "
                        "for --costs FILE)");
        table = CostTable::fromMeasuredSeconds(profile, 1, table, "the last run");
        out.measured = true;
    } else if (settings.costs != "static") {
        table = CostTable::fromMeasured(settings.costs, graph, prepared.topo, table, &out.missing);
        out.measured = true;
    }
    out.table = std::make_shared<const CostTable>(std::move(table));
    return out;
}

SchedulingProblem problemOf(const PreparedModel& prepared, const CostTable& costs, const PlanSettings& settings)
{
    SchedulingProblem p = SchedulingProblem::of(prepared.model.graph, prepared.topo, costs, settings.cores(),
                                                settings.batch, settings.degree);
    p.clone = settings.clone;
    p.switching = settings.switching;
    p.hybridThreads = settings.hybrid ? p.workers : 1;
    p.check();
    return p;
}

namespace {

// Everything shown about p->plan: loads, bound, costs in use, metrics, clusters, critical path.
void describePlan(PlannedModel& p)
{
    const CostTable& table = *p.costs.table;
    const PreparedModel& prepared = *p.prepared;
    const Graph& graph = prepared.model.graph;
    p.loads = clusterLoads(p.plan.schedule, table);
    const double lowerBound = std::max(p.plan.span, p.plan.work / p.problem.workers);
    p.bound = lowerBound > 0 ? p.plan.simulation.serial / lowerBound : 0;

    // Nodes whose static cost is unknown (a size the formula needs is not known) have no
    // cost in the metrics until one is measured: the figures say unknown, not a guess.
    p.nodeSeconds.resize(graph.nodeCount());
    for (size_t n = 0; n < graph.nodeCount(); ++n)
        p.nodeSeconds[n] =
            p.costs.measured || prepared.staticCosts[n].known ? table.node(NodeId(n), 1) : std::nan("");
    p.metrics = computeMetrics(graph, prepared.topo, prepared.staticCosts, p.nodeSeconds);
    mapClusters(p);
    mapCriticalPath(p);
}

}  // namespace

std::shared_ptr<const PlannedModel> plan(std::shared_ptr<const PreparedModel> prepared, const PlanSettings& settings,
                                         Costs costs, bool gantt)
{
    const auto start = std::chrono::steady_clock::now();
    findScheduler(settings.algorithm);  // a bad name fails first
    auto p = std::make_shared<PlannedModel>();
    p->prepared = prepared;
    p->settings = settings;
    p->costs = std::move(costs);
    p->problem = problemOf(*prepared, *p->costs.table, settings);
    p->plan = planSchedule(p->problem, settings.algorithm, gantt);
    describePlan(*p);
    p->seconds = secondsSince(start);
    return p;
}

std::shared_ptr<const PlannedModel> planWithSchedule(std::shared_ptr<const PreparedModel> prepared,
                                                     const PlanSettings& settings, Costs costs, Schedule schedule,
                                                     bool gantt)
{
    const auto start = std::chrono::steady_clock::now();
    auto p = std::make_shared<PlannedModel>();
    p->prepared = prepared;
    p->settings = settings;
    p->costs = std::move(costs);
    p->problem = problemOf(*prepared, *p->costs.table, settings);
    p->problem.workers = std::max<int>(1, int(schedule.clusters.size()));
    p->plan.schedule = std::move(schedule);
    measurePlan(p->plan, p->problem, gantt);
    describePlan(*p);
    p->seconds = secondsSince(start);
    return p;
}

TeachingSteps teachingSteps(const PlannedModel& planned)
{
    TeachingSteps t;
    const Schedule& s = planned.plan.schedule;
    const CostTable& costs = *planned.costs.table;
    t.samples = s.subBatch.empty() ? 1 : s.subBatch[0];
    t.paths = linearClusters(costs, t.samples);
    // The merges linear scheduling makes of these paths, in order (the same call it makes).
    MergeReport report;
    clusterOneCopy(costs, t.samples, planned.problem.workers, &report);
    t.merges = report.steps;
    t.freeMerges = report.freeMerges;
    for (const auto& path : t.paths) {
        double seconds = 0;
        for (NodeId n : path)
            seconds += costs.node(n, t.samples);
        t.pathSeconds.push_back(seconds);
    }
    return t;
}

TeachingState teachingState(const PlannedModel& planned, const TeachingSteps& steps, int step)
{
    const int peeled = int(steps.paths.size());
    const int merged = int(steps.merges.size());
    if (step < 0 || step >= peeled + merged)
        throw Error(ErrorKind::Usage, planned.prepared->path,
                    "teaching step " + std::to_string(step) + " is not between 0 and " +
                        std::to_string(peeled + merged - 1));
    const size_t nodes = planned.prepared->model.graph.nodeCount();
    TeachingState st;
    st.clusterOfNode.assign(nodes, -1);
    if (step < peeled) {
        for (int k = 0; k <= step; ++k)
            for (NodeId n : steps.paths[size_t(k)])
                st.clusterOfNode[size_t(n)] = k;
        st.current = steps.paths[size_t(step)];
        st.currentSeconds = steps.pathSeconds[size_t(step)];
    } else {
        // Each path's group after merges 0..j, named by the path heading it; `before`: after 0..j-1.
        const size_t j = size_t(step - peeled);
        std::vector<int> head(static_cast<size_t>(peeled));
        std::vector<int> before;
        for (size_t k = 0; k < head.size(); ++k)
            head[k] = int(k);
        for (size_t m = 0; m <= j; ++m) {
            if (m == j)
                before = head;
            for (int& h : head)
                if (h == steps.merges[m].first)
                    h = steps.merges[m].second;
        }
        for (size_t k = 0; k < head.size(); ++k) {
            for (NodeId n : steps.paths[k])
                st.clusterOfNode[size_t(n)] = head[k];
            if (before[k] == steps.merges[j].first) {  // the group this merge moved
                st.current.insert(st.current.end(), steps.paths[k].begin(), steps.paths[k].end());
                st.currentSeconds += steps.pathSeconds[k];
            }
        }
    }
    // Schedule clusters in the order of their heading path, the nodes not yet clustered last.
    std::set<int> ids(st.clusterOfNode.begin(), st.clusterOfNode.end());
    const bool rest = ids.count(-1) > 0;
    ids.erase(-1);
    st.clusterColors.assign(ids.begin(), ids.end());
    st.groups = int(st.clusterColors.size());
    if (rest)
        st.clusterColors.push_back(-1);
    SchedulingProblem problem = planned.problem;
    problem.batch = steps.samples;
    problem.degree = 1;
    problem.workers = int(st.clusterColors.size());
    problem.clone = false;
    problem.hybridThreads = 1;
    st.schedule = emptySchedule(problem, "linear");
    for (size_t n = 0; n < nodes; ++n) {
        const int id = st.clusterOfNode[n];
        st.schedule.owner[n] = id < 0 ? st.groups
                                      : int32_t(std::lower_bound(st.clusterColors.begin(),
                                                                 st.clusterColors.begin() + st.groups, id) -
                                                st.clusterColors.begin());
    }
    clustersFromOwners(st.schedule, problem.workers);
    return st;
}

std::shared_ptr<const PlannedModel> teachingPlan(const PlannedModel& planned, const TeachingSteps& steps,
                                                 const TeachingState& state)
{
    PlanSettings settings = planned.settings;
    settings.batch = steps.samples;
    settings.degree = 1;
    settings.clone = false;
    settings.hybrid = false;
    return planWithSchedule(planned.prepared, settings, planned.costs, state.schedule);
}

std::shared_ptr<const PreparedModel> prepareSubgraph(const PreparedModel& parent, const Graph& body,
                                                     const std::string& name)
{
    const auto start = std::chrono::steady_clock::now();
    auto source = std::make_shared<Model>();
    source->path = parent.path;
    source->irVersion = parent.model.irVersion;
    source->producerName = parent.model.producerName;
    source->producerVersion = parent.model.producerVersion;
    source->opsets = parent.model.opsets;
    source->graph = body;
    if (source->graph.name.empty())
        source->graph.name = name;
    auto p = std::make_shared<PreparedModel>();
    p->path = parent.path;
    p->source = source;
    p->model = *source;
    p->topo = buildTopology(p->model.graph);
    p->machine = parent.machine;
    p->staticCosts = estimateCosts(p->model.graph);
    p->staticSeconds = costSeconds(p->staticCosts, p->machine);
    p->staticMetrics = computeMetrics(p->model.graph, p->topo, p->staticCosts, p->staticSeconds);
    p->prepareSeconds = secondsSince(start);
    return p;
}

}  // namespace ramiel::pipeline
