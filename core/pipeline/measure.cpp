#include "core/pipeline/measure.h"

#include "core/runtime/profiling.h"

#include <algorithm>

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
    compiled.setInputs(compiled.randomInputs(samples, 1));
    const MeasuredCosts one = profileNodes(compiled, nodes, samples, runs, 1);
    CostTable table = CostTable::fromMeasuredSeconds(one.nodeSeconds, samples, *fallback.table, "measured");
    if (problem.workers > 1 && problem.degree == 1) {
        const MeasuredCosts threaded = profileNodes(compiled, nodes, samples, runs, problem.workers);
        table.setThreadedSeconds(problem.workers, threaded.nodeSeconds, samples);
    }
    Costs out;
    out.table = std::make_shared<const CostTable>(std::move(table));
    out.measured = true;
    return out;
}

Costs measureInContext(const PreparedModel& prepared, const Costs& alone, Executor& executor, int batch, int runs)
{
    const MeasuredCosts inContext = profileExecutor(executor, prepared.model.graph.nodeCount(), batch, runs, 1);
    Costs out;
    out.table = std::make_shared<const CostTable>(
        CostTable::fromMeasuredSeconds(inContext.nodeSeconds, batch, *alone.table, "measured in context"));
    out.measured = true;
    return out;
}

Simulation simulateWith(const PlannedModel& planned, const Costs& costs)
{
    return simulate(planned.plan.schedule, *costs.table);
}

}  // namespace ramiel::pipeline
