// ramiel cluster MODEL.onnx: plan a parallel schedule and report it.
// ramiel compare MODEL.onnx: every scheduler side by side.
#include "analysis.h"
#include "commands.h"

#include "core/report/schedule_json.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <iostream>

namespace ramiel::cli {

namespace {

std::string instanceName(const Graph& g, const Schedule& s, InstanceId i)
{
    return printable(g.node(s.node(i)).name) + (s.degree > 1 ? "#" + std::to_string(s.copy(i)) : "");
}

void printPlan(const pipeline::PlannedModel& planned)
{
    const Graph& g = planned.prepared->model.graph;
    const Plan& plan = planned.plan;
    const Schedule& s = plan.schedule;
    const Simulation& sim = plan.simulation;
    const double bound = planned.bound;
    std::cout << printable(planned.prepared->path) << ": " << s.algorithm << " for P = " << s.workers << " ("
              << describeThreads(s) << "), batch "
              << s.batch << (s.degree > 1 ? ", " + std::to_string(s.degree) + " sub-batches" : std::string()) << ", "
              << planned.costs.table->source() << " costs, " << passes::passesRunText(planned.prepared->passes) << "\n";
    std::cout << "  makespan      " << formatSeconds(sim.makespan) << "  (serial " << formatSeconds(sim.serial)
              << ": speedup " << formatFixed(sim.speedup, 2) << "x; bound " << formatFixed(bound, 2)
              << "x from span and P)\n";
    const std::vector<double>& loads = planned.loads;
    double maxLoad = 0, sum = 0;
    for (double l : loads) {
        maxLoad = std::max(maxLoad, l);
        sum += l;
    }
    std::cout << "  clusters      " << s.clusters.size() << ", balance " << formatFixed(maxLoad / (sum / loads.size()), 2)
              << " (max/mean load)";
    if (plan.merges.freeMerges + plan.merges.guidedMerges > 0)
        std::cout << "; merges: " << plan.merges.freeMerges << " free, " << plan.merges.guidedMerges << " guided";
    if (plan.hyper.swapsTried > 0)
        std::cout << "; switching swaps kept " << plan.hyper.swapsKept << " of " << plan.hyper.swapsTried;
    std::cout << "\n";
    double bytes = 0;
    for (const CrossEdge& e : plan.crossEdges)
        bytes += e.bytes;
    std::cout << "  cross edges   " << plan.crossEdges.size() << " (" << formatBytes(bytes) << ")";
    std::cout << "; clones " << plan.clones.clones << " (removed " << plan.clones.crossEdgesRemoved()
              << " cross edges)\n";
    if (plan.hybrid.threads > 1) {
        const HybridReport& h = plan.hybrid;
        std::cout << "  hybrid        ";
        if (h.applied())
            std::cout << h.summary() << ", makespan " << formatSeconds(h.makespanBefore) << " -> " << formatSeconds(h.makespanAfter) << "\n";
        else
            std::cout << "not used (" << (h.skipped.empty() ? "no gain in simulation" : h.skipped) << ")\n";
    }
    std::cout << "  valid         " << (plan.validation.valid ? "yes: every cluster follows one global order"
                                                             : "NO: " + plan.validation.problems.front())
              << "\n";
    std::cout << "  planned in    " << formatSeconds(plan.planningSeconds) << "\n";
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        const auto& items = s.clusters[c];
        const int threads = s.workerThreadsOf(c);
        std::cout << "  worker " << c << (c < 10 ? "      " : "     ") << items.size() << " nodes"
                  << (threads > 1 ? " on " + std::to_string(threads) + " threads" : std::string()) << ", load "
                  << formatSeconds(loads[c]) << ", idle " << formatSeconds(sim.wait[c]) << ": ";
        const size_t head = 4;
        for (size_t k = 0; k < items.size() && k < head; ++k)
            std::cout << (k ? " -> " : "") << instanceName(g, s, items[k]);
        if (items.size() > head)
            std::cout << " -> ... -> " << instanceName(g, s, items.back());
        std::cout << "\n";
    }
}

}  // namespace

Command addClusterCommand(CLI::App& app)
{
    auto o = std::make_shared<PlanOptions>();
    CLI::App* sub = app.add_subcommand("cluster", "Plan a parallel schedule: clusters, loads, cross-cluster edges, "
                                                  "simulated makespan and speedup");
    addPlanOptions(sub, *o);
    sub->add_flag("--gantt", o->gantt, "Include the simulated Gantt chart in the JSON");
    return {sub, [o] {
                const auto prepared = prepareModel(o->model);
                pipeline::Costs costs = pipeline::costTable(*prepared, o->settings);
                warnMissingCosts(*prepared, costs);
                const auto planned = pipeline::plan(prepared, o->settings, std::move(costs), o->gantt);
                if (o->json)
                    std::cout << planToJson(prepared->model.graph, planned->problem, planned->plan, o->gantt)
                                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                              << "\n";
                else
                    printPlan(*planned);
                return planned->plan.validation.valid ? 0 : exitCode(ErrorKind::Internal);
            }};
}

Command addCompareCommand(CLI::App& app)
{
    auto o = std::make_shared<PlanOptions>();
    CLI::App* sub = app.add_subcommand("compare", "Every scheduler's simulated makespan on the same graph, side by side");
    addPlanOptions(sub, *o, {"algorithm"});
    return {sub, [o] {
                const auto prepared = prepareModel(o->model);
                pipeline::Costs costs = pipeline::costTable(*prepared, o->settings);
                warnMissingCosts(*prepared, costs);
                const SchedulingProblem p = pipeline::problemOf(*prepared, *costs.table, o->settings);
                nlohmann::json rows = nlohmann::json::array();
                bool allValid = true;
                if (!o->json)
                    std::cout << printable(prepared->path) << ": " << p.workers << " workers, batch " << p.batch
                              << ", degree " << p.degree << ", " << costs.table->source() << " costs, "
                              << passes::passesRunText(prepared->passes) << "\n"
                              << "  algorithm   makespan    speedup  workers x threads      cross edges  clones  valid  planned in\n";
                for (const SchedulerInfo& info : schedulers()) {
                    pipeline::PlanSettings settings = o->settings;
                    settings.algorithm = info.name;
                    const auto planned = pipeline::plan(prepared, settings, costs, false);
                    const Plan& plan = planned->plan;
                    allValid = allValid && plan.validation.valid;
                    if (o->json) {
                        rows.push_back(planSummaryJson(plan));
                        continue;
                    }
                    char line[256];
                    std::snprintf(line, sizeof line, "  %-10s  %-10s  %6.2fx  %-21s  %11zu  %6d  %-5s  %s\n",
                                  info.name.c_str(), formatSeconds(plan.simulation.makespan).c_str(),
                                  plan.simulation.speedup, describeThreads(plan.schedule).c_str(),
                                  plan.crossEdges.size(),
                                  plan.clones.clones, plan.validation.valid ? "yes" : "NO",
                                  formatSeconds(plan.planningSeconds).c_str());
                    std::cout << line;
                }
                if (o->json)
                    std::cout << nlohmann::json{{"schema", "ramiel.compare/1"},
                                                {"model", prepared->path},
                                                {"workers", p.workers},
                                                {"batch", p.batch},
                                                {"degree", p.degree},
                                                {"cost_source", costs.table->source()},
                                                {"algorithms", rows}}
                                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                              << "\n";
                return allValid ? 0 : exitCode(ErrorKind::Internal);
            }};
}

}  // namespace ramiel::cli
