#include "core/schedule/scheduler.h"

#include "core/analysis/distance.h"
#include "core/schedule/linear_clustering.h"
#include "core/schedule/list_schedulers.h"
#include "core/util/error.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace ramiel {

std::vector<std::vector<NodeId>> clusterOneCopy(const CostTable& costs, int samples, int workers, MergeReport* merges)
{
    SchedulingProblem one;
    one.topo = &costs.topology();
    one.costs = &costs;
    one.workers = workers;
    one.batch = samples;
    one.degree = 1;
    Schedule s = emptySchedule(one, "linear");
    const auto chains = linearClusters(costs, samples);
    for (size_t k = 0; k < chains.size(); ++k)
        for (NodeId n : chains[k])
            s.owner[size_t(n)] = int32_t(k);
    clustersFromOwners(s, int(chains.size()));
    const MergeReport m = mergeClusters(s, costs, workers);
    if (merges) {
        merges->freeMerges += m.freeMerges;
        merges->guidedMerges += m.guidedMerges;
        merges->rejected += m.rejected;
        merges->steps.insert(merges->steps.end(), m.steps.begin(), m.steps.end());
    }
    const std::vector<double> loads = clusterLoads(s, costs);
    std::vector<size_t> byLoad(s.clusters.size());
    std::iota(byLoad.begin(), byLoad.end(), 0);
    std::stable_sort(byLoad.begin(), byLoad.end(), [&](size_t a, size_t b) { return loads[a] > loads[b]; });
    std::vector<std::vector<NodeId>> out;
    for (size_t c : byLoad)
        out.emplace_back(s.clusters[c].begin(), s.clusters[c].end());  // degree 1: instance id = node id
    return out;
}

namespace {

SchedulerOutput linearSchedule(const SchedulingProblem& p)
{
    SchedulerOutput out{emptySchedule(p, "linear"), {}, {}};
    std::map<int, CopyClusters> bySize;
    for (int size : out.schedule.subBatch)
        if (!bySize.count(size))
            bySize[size] = clusterOneCopy(*p.costs, size, p.workers, &out.merges);
    std::vector<CopyClusters> perCopy;
    for (int size : out.schedule.subBatch)
        perCopy.push_back(bySize[size]);
    out.hyper = combineCopies(out.schedule, *p.costs, perCopy, p.switching);
    return out;
}

SchedulerOutput serialSchedule(const SchedulingProblem& p)
{
    SchedulerOutput out{emptySchedule(p, "serial"), {}, {}};
    clustersFromOwners(out.schedule, 1);
    return out;
}

SchedulerOutput dsc(const SchedulingProblem& p)
{
    SchedulerOutput out{dscSchedule(p), {}, {}};
    out.merges = mergeClusters(out.schedule, *p.costs, p.workers);
    return out;
}

SchedulerOutput heft(const SchedulingProblem& p) { return {heftSchedule(p), {}, {}}; }

}  // namespace

const std::vector<SchedulerInfo>& schedulers()
{
    static const std::vector<SchedulerInfo> table = {
        {"linear", "critical-path linear clustering, merging to P, hypercluster switching for d > 1", linearSchedule},
        {"dsc", "dominant-sequence clustering (Yang & Gerasoulis), merged to P", dsc},
        {"heft", "earliest-finish-time list scheduling with insertion (Topcuoglu et al.)", heft},
        {"serial", "everything on one worker, in topological order", serialSchedule},
    };
    return table;
}

const SchedulerInfo& findScheduler(const std::string& name)
{
    std::string known;
    for (const SchedulerInfo& s : schedulers()) {
        if (s.name == name)
            return s;
        known += (known.empty() ? "" : ", ") + s.name;
    }
    throw Error(ErrorKind::Usage, {}, "unknown algorithm '" + name + "' (known: " + known + ")");
}

std::vector<int> threadsPerWorker(const Plan& plan, const CostTable& costs, int cores)
{
    const auto& clusters = plan.schedule.clusters;
    std::vector<int> threads(clusters.size(), 1);
    if (clusters.empty() || cores <= int(clusters.size()))
        return threads;
    const std::vector<double> loads = clusterLoads(plan.schedule, costs);
    const size_t critical = size_t(std::max_element(loads.begin(), loads.end()) - loads.begin());
    threads[critical] += cores - int(clusters.size());
    return threads;
}

void measurePlan(Plan& plan, const SchedulingProblem& p, bool withGantt)
{
    plan.simulation = simulate(plan.schedule, *p.costs, withGantt);
    plan.validation = validate(plan.schedule, *p.topo);
    plan.crossEdges = crossEdges(plan.schedule, *p.costs);
    const int largest = *std::max_element(plan.schedule.subBatch.begin(), plan.schedule.subBatch.end());
    std::vector<double> w(p.nodeCount());
    for (size_t n = 0; n < w.size(); ++n)
        w[n] = p.costs->node(NodeId(n), largest);
    plan.span = computeDistances(*p.topo, w).span;
    plan.work = 0;
    for (size_t i = 0; i < plan.schedule.instanceCount(); ++i)
        plan.work += p.costs->node(plan.schedule.node(InstanceId(i)), plan.schedule.samples(InstanceId(i)));  // one thread
}

Plan planSchedule(const SchedulingProblem& p, const std::string& algorithm, bool withGantt)
{
    const auto t0 = std::chrono::steady_clock::now();
    const SchedulerInfo& info = findScheduler(algorithm);
    p.check();
    SchedulerOutput out = info.run(p);
    Plan plan;
    plan.schedule = std::move(out.schedule);
    plan.merges = out.merges;
    plan.hyper = out.hyper;
    if (p.clone)
        plan.clones = cloneCheapNodes(plan.schedule, *p.costs);
    else
        plan.clones.crossEdgesBefore = plan.clones.crossEdgesAfter = int(crossEdges(plan.schedule, *p.costs).size());
    if (p.hybridThreads > 1 && p.graph)
        plan.hybrid = makeHybrid(plan.schedule, *p.graph, *p.costs, p.hybridThreads);
    const std::vector<int> threads = threadsPerWorker(plan, *p.costs, p.workers);
    plan.schedule.workerThreads.assign(threads.begin(), threads.end());
    plan.planningSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    measurePlan(plan, p, withGantt);
    return plan;
}

}  // namespace ramiel
