#include "core/runtime/profiling.h"

#include "core/util/atomic_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ramiel {

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double untimedPerNode(const MeasuredCosts& costs)
{
    if (costs.nodeSeconds.empty())
        return 0;
    double timed = 0;
    for (double s : costs.nodeSeconds)
        timed += s;
    return std::max(0.0, costs.medianTotal - timed) / double(costs.nodeSeconds.size());
}

MeasuredCosts profileNodes(CompiledModel& model, size_t nodeCount, int batch, int runs, int threads, int warmup)
{
    const auto executor = model.serialExecutor(threads);
    return profileExecutor(*executor, nodeCount, batch, runs, threads, warmup);
}

MeasuredCosts profileExecutor(Executor& executor, size_t nodeCount, int batch, int runs, int threads, int warmup)
{
    MeasuredCosts m;
    m.batch = batch;
    m.threads = threads;
    m.runs = runs;
    warmUp(executor, warmup);
    std::vector<std::vector<double>> perNode(nodeCount);
    std::vector<double> totals;
    RunProfile profile;
    for (int i = 0; i < runs; ++i) {
        executor.run(&profile);
        totals.push_back(profile.totalSeconds);
        for (size_t n = 0; n < nodeCount; ++n)
            perNode[n].push_back(profile.nodeSeconds[n]);
    }
    for (auto& samples : perNode)
        m.nodeSeconds.push_back(median(samples));
    m.nodeThreads = profile.nodeThreads;
    m.medianTotal = median(totals);
    return m;
}

void writeMeasuredCosts(const std::string& path, const Graph& graph, const MeasuredCosts& costs,
                        const std::vector<MeasuredCosts>& threaded, const nlohmann::json& host)
{
    auto byName = [&](const MeasuredCosts& m) {
        nlohmann::json nodes = nlohmann::json::object();
        for (size_t n = 0; n < graph.nodeCount(); ++n)
            nodes[graph.node(NodeId(n)).name] = m.nodeSeconds[n];
        return nodes;
    };
    // Nodes that ran on fewer threads than the table's (node_threads.h), where any did.
    auto addFewerThreads = [&](nlohmann::json& table, const MeasuredCosts& m) {
        nlohmann::json names = nlohmann::json::array();
        for (size_t n = 0; n < m.nodeThreads.size() && n < graph.nodeCount(); ++n)
            if (m.nodeThreads[n] < m.threads)
                names.push_back(graph.node(NodeId(n)).name);
        if (!names.empty())
            table["fewer_threads"] = names;
    };
    nlohmann::json j = {{"schema", "ramiel.costs/1"}, {"batch", costs.batch},     {"threads", costs.threads},
                        {"runs", costs.runs},         {"median_total", costs.medianTotal}, {"nodes", byName(costs)}};
    addFewerThreads(j, costs);
    if (!threaded.empty()) {
        j["threaded"] = nlohmann::json::array();
        for (const MeasuredCosts& t : threaded) {
            nlohmann::json table = {{"threads", t.threads},
                                    {"runs", t.runs},
                                    {"median_total", t.medianTotal},
                                    {"nodes", byName(t)}};
            addFewerThreads(table, t);
            j["threaded"].push_back(table);
        }
    }
    if (!host.is_null())
        j["host"] = host;
    writeFileAtomically(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace ramiel
