#include "core/pipeline/measure.h"

#include "core/pipeline/run_inputs.h"
#include "core/runtime/profiling.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ramiel::pipeline {

Costs measureCosts(const PreparedModel& prepared, const PlanSettings& settings, CompiledModel& compiled, int runs)
{
    PlanSettings staticSettings = settings;
    staticSettings.costs = "static";
    const Costs fallback = costTable(prepared, staticSettings);
    const SchedulingProblem problem = problemOf(prepared, *fallback.table, settings);
    const std::vector<int> sizes = problem.subBatches();
    const int samples = *std::max_element(sizes.begin(), sizes.end());
    const size_t nodes = prepared.model.graph.nodeCount();
    compiled.setInputs(runInputs(prepared.model, compiled, prepared.inputFiles, samples, 1));
    const MeasuredCosts one = profileNodes(compiled, nodes, samples, runs, 1);
    CostTable table =
        CostTable::fromMeasuredSeconds(one.nodeSeconds, samples, *fallback.table, "measured", untimedPerNode(one));
    if (problem.workers > 1 && problem.degree == 1) {
        const MeasuredCosts threaded = profileNodes(compiled, nodes, samples, runs, problem.workers);
        table.setThreadedSeconds(problem.workers, threaded.nodeSeconds, samples, untimedPerNode(threaded));
    }
    Costs out;
    out.table = std::make_shared<const CostTable>(std::move(table));
    out.measured = true;
    return out;
}

Costs measureInContext(const PreparedModel& prepared, const Costs& alone, Executor& executor,
                       const Schedule& schedule, int batch, int runs)
{
    const size_t nodes = prepared.model.graph.nodeCount();
    const MeasuredCosts inContext = profileExecutor(executor, nodes, batch, runs, 1);
    // Each node's time goes to the thread count its owner runs it with.
    std::map<int, std::vector<double>> byThreads;
    for (size_t k = 0; k < schedule.clusters.size(); ++k)
        for (InstanceId i : schedule.clusters[k])
            if (!schedule.isClone(k, i)) {
                auto& seconds = byThreads.try_emplace(schedule.threadsOf(k, i), nodes, std::nan("")).first->second;
                const size_t n = size_t(schedule.node(i));
                seconds[n] = inContext.nodeSeconds[n];
            }
    // The executor's own time per node is taken from the costs measured alone.
    CostTable table = CostTable::fromMeasuredSeconds(byThreads.count(1) ? byThreads.at(1) : std::vector<double>(),
                                                     batch, *alone.table, "measured in context",
                                                     alone.table->untimedSeconds(1));
    for (const auto& [threads, seconds] : byThreads)
        table.updateThreadedSeconds(threads, seconds, batch);
    Costs out;
    out.table = std::make_shared<const CostTable>(std::move(table));
    out.measured = true;
    return out;
}

Simulation simulateWith(const PlannedModel& planned, const Costs& costs)
{
    return simulate(planned.plan.schedule, *costs.table);
}

}  // namespace ramiel::pipeline
