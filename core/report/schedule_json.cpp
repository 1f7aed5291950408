#include "core/report/schedule_json.h"

#include <algorithm>

namespace ramiel {

nlohmann::json hybridReportToJson(const HybridReport& h)
{
    nlohmann::json j = {{"threads", h.threads},
                        {"cuts", h.cuts},
                        {"stretches", h.stretches},
                        {"stretches_moved", h.stretchesMoved},
                        {"threaded_instances", h.threadedInstances},
                        {"split_instances", h.splitInstances},
                        {"one_worker", h.oneWorker}};
    if (!h.skipped.empty())
        j["skipped"] = h.skipped;
    return j;
}

nlohmann::json planSummaryJson(const Plan& plan)
{
    const Schedule& s = plan.schedule;
    const double lowerBound = std::max(plan.span, plan.work / s.workers);  // on any makespan
    return {
        {"algorithm", s.algorithm},
        {"workers", s.workers},
        {"batch", s.batch},
        {"degree", s.degree},
        {"makespan", plan.simulation.makespan},
        {"serial", plan.simulation.serial},
        {"speedup", plan.simulation.speedup},
        {"span", plan.span},
        {"work", plan.work},
        {"speedup_bound", lowerBound > 0 ? plan.simulation.serial / lowerBound : 0.0},
        {"cluster_count", s.clusters.size()},
        {"cross_edge_count", plan.crossEdges.size()},
        {"clone_count", plan.clones.clones},
        {"valid", plan.validation.valid},
        {"planning_seconds", plan.planningSeconds},
    };
}

nlohmann::json planToJson(const Graph& g, const SchedulingProblem& p, const Plan& plan, bool withGantt)
{
    const Schedule& s = plan.schedule;
    nlohmann::json j = planSummaryJson(plan);
    j["schema"] = kScheduleSchema;
    j["sub_batches"] = s.subBatch;
    j["cost_source"] = p.costs->source();
    j["edge_cost"] = {{"latency_seconds", p.costs->edgeParameters().latencySeconds},
                      {"bytes_per_second", p.costs->edgeParameters().bytesPerSecond}};
    j["problems"] = plan.validation.problems;
    auto instanceJson = [&](InstanceId i) {
        return nlohmann::json{{"node", g.node(s.node(i)).name}, {"copy", s.copy(i)}, {"samples", s.samples(i)}};
    };
    const std::vector<double> loads = clusterLoads(s, *p.costs);
    nlohmann::json clusters = nlohmann::json::array();
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        nlohmann::json items = nlohmann::json::array();
        for (InstanceId i : s.clusters[c]) {
            nlohmann::json item = instanceJson(i);
            item["clone"] = s.isClone(c, i);
            if (s.threadsOf(c, i) > 1)
                item["intra_op_threads"] = s.threadsOf(c, i);
            items.push_back(item);
        }
        clusters.push_back({{"index", c},
                            {"worker", c},
                            {"load", loads[c]},
                            {"busy", plan.simulation.busy[c]},
                            {"wait", plan.simulation.wait[c]},
                            {"instances", items}});
    }
    j["clusters"] = clusters;
    nlohmann::json cross = nlohmann::json::array();
    for (const CrossEdge& e : plan.crossEdges)
        cross.push_back({{"from", g.node(s.node(e.from)).name},
                         {"to", g.node(s.node(e.to)).name},
                         {"copy", s.copy(e.from)},
                         {"from_cluster", e.fromCluster},
                         {"to_cluster", e.toCluster},
                         {"bytes", e.bytes},
                         {"cost", e.cost}});
    j["cross_edges"] = cross;
    if (p.hybridThreads > 1) {
        j["hybrid"] = hybridReportToJson(plan.hybrid);
        j["hybrid"]["simulated_before"] = plan.hybrid.makespanBefore;
        j["hybrid"]["simulated_after"] = plan.hybrid.makespanAfter;
    }
    j["clones"] = {{"made", plan.clones.clones},
                   {"cross_edges_before", plan.clones.crossEdgesBefore},
                   {"cross_edges_after", plan.clones.crossEdgesAfter},
                   {"cross_edges_removed", plan.clones.crossEdgesRemoved()}};
    j["merges"] = {{"free", plan.merges.freeMerges}, {"guided", plan.merges.guidedMerges}};
    j["hypercluster_swaps"] = {{"tried", plan.hyper.swapsTried}, {"kept", plan.hyper.swapsKept}};
    if (withGantt) {
        nlohmann::json gantt = nlohmann::json::array();
        for (const GanttEntry& e : plan.simulation.gantt) {
            nlohmann::json item = instanceJson(e.instance);
            item["worker"] = e.worker;
            item["start"] = e.start;
            item["end"] = e.end;
            item["clone"] = e.clone;
            gantt.push_back(item);
        }
        j["gantt"] = gantt;
    }
    return j;
}

}  // namespace ramiel
