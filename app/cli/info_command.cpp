// ramiel info MODEL.onnx: the model summary and its graph metrics.
#include "analysis.h"
#include "commands.h"

#include "core/analysis/metrics.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/report/info_json.h"
#include "core/runtime/runtime.h"
#include "core/util/text.h"

#include <algorithm>
#include <iostream>
#include <memory>

namespace ramiel::cli {

namespace {

struct InfoOptions {
    ModelOptions model;
    bool json = false;
    bool nodes = false;
};

std::string pathSummary(const Graph& g, const std::vector<NodeId>& path)
{
    std::string s;
    const size_t head = 6, tail = 3;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path.size() > head + tail + 1 && i == head) {
            s += " -> ... (" + std::to_string(path.size() - head - tail) + " more)";
            i = path.size() - tail - 1;
            continue;
        }
        s += (i ? " -> " : "") + printable(g.node(path[i]).name);
    }
    return s;
}

void printText(const pipeline::PreparedModel& p, bool nodeTable)
{
    const Model& model = p.model;
    const GraphMetrics& m = p.staticMetrics;
    const MachineConstants& machine = p.machine;
    const std::vector<NodeCost>& costs = p.staticCosts;
    const std::vector<double>& seconds = p.staticSeconds;
    const Graph& g = model.graph;
    auto& out = std::cout;
    auto row = [&](const char* label) -> std::ostream& {
        out << "  ";
        out.width(14);
        out << std::left << label;
        return out;
    };
    out << printable(model.path) << "\n";
    std::string opsets;
    for (const OpsetImport& o : model.opsets)
        opsets += (opsets.empty() ? "" : ", ") + (o.domain.empty() ? std::string("ai.onnx") : printable(o.domain)) + " " +
                  std::to_string(o.version);
    row("format") << "ONNX IR " << model.irVersion << ", opsets " << opsets;
    if (!model.producerName.empty())
        out << ", from " << printable(model.producerName) << " " << printable(model.producerVersion);
    out << "\n";
    for (ValueId v : g.inputs()) {
        const Value& value = g.value(v);
        if (value.isConstant())
            continue;
        row("input") << printable(value.name) << "  " << printable(value.type.toString());
        if (const OneSampleInput* s = model.oneSampleInput(value.name))
            out << "  (one sample: the file's batch" << (s->batchSymbol.empty() ? "" : " '" + printable(s->batchSymbol) + "'")
                << " is symbolic; -b sets the batch, --shape other sizes)";
        out << "\n";
    }
    for (ValueId v : g.outputs())
        row("output") << printable(g.value(v).name) << "  " << printable(g.value(v).type.toString()) << "\n";
    row("prepared") << "with " << passes::passesRunText(p.passes);
    if (p.passes == passes::parsePassList("default"))  // as passesRunText says "the default passes"
        out << " (" << p.passes.size() << ": ramiel optimize --list-passes)";
    if (p.passes.empty())
        out << ": the graph as read\n";
    else
        out << "; " << p.source->graph.nodeCount() << " nodes as read, --passes none keeps them\n";
    row("graph") << m.nodes << " nodes, " << m.edges << " edges, " << m.values << " values, " << m.initializers
                 << " initializers (" << formatDecimal(m.parameters, "") << " parameters, "
                 << formatBytes(m.parameterBytes) << ")\n";
    if (g.nodeCountRecursive() > g.nodeCount())
        row("subgraphs") << g.nodeCountRecursive() - g.nodeCount()
                         << " more nodes inside If/Loop/Scan bodies (each such node is one unit)\n";
    row("structure") << "depth " << m.depth << " levels, width " << m.width << " (largest level)\n";

    std::vector<std::pair<std::string, size_t>> ops(m.opHistogram.begin(), m.opHistogram.end());
    std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::string hist;
    for (const auto& [op, count] : ops)
        hist += (hist.empty() ? "" : ", ") + printable(op) + " " + std::to_string(count);
    row("operators") << hist << "\n";

    const bool complete = m.costsComplete();
    const std::string atLeast = complete ? "" : ">= ";
    row("cost") << atLeast << formatFlops(m.flops) << ", " << atLeast << formatBytes(m.bytes)
                << " moved\n";
    row("cost model") << "static: overhead + max(FLOP / " << formatDecimal(machine.flopsPerSecond, "FLOP/s")
                      << ", bytes / " << formatDecimal(machine.bytesPerSecond, "B/s")
                      << "), overhead " << formatSeconds(machine.overheadSeconds) << " (" << machine.source
                      << ")\n";
    row("work T1") << atLeast << formatSeconds(m.work) << "\n";
    row("span T-inf") << atLeast << formatSeconds(m.span) << "\n";
    row("parallelism") << (m.parallelism ? formatFixed(*m.parallelism, 2) : std::string("unknown"))
                       << "  (T1 / T-inf: the most any schedule can gain from running branches at once)\n";
    row("critical path") << m.criticalPath.size() << " nodes, " << formatSeconds(m.span) << ": "
                         << pathSummary(g, m.criticalPath) << "\n";
    if (!complete) {
        row("unknown cost") << m.unknownCostNodes.size() << " nodes, e.g. '"
                            << printable(g.node(m.unknownCostNodes.front()).name)
                            << "': " << printable(costs[static_cast<size_t>(m.unknownCostNodes.front())].unknownReason)
                            << "; " << unknownCostsRemedy(m) << "\n";
    }
    for (const std::string& w : model.warnings)
        row("warning") << w << "\n";

    if (nodeTable) {
        out << "\n  " << "node\top\toutput\tFLOP\tbytes\tcost\tt-level\tb-level\tcritical\n";
        std::vector<bool> critical(g.nodeCount(), false);
        for (NodeId id : m.criticalPath)
            critical[static_cast<size_t>(id)] = true;
        for (const Node& n : g.nodes()) {
            const size_t i = static_cast<size_t>(n.id);
            const ValueId o = n.outputs.empty() ? kNone : n.outputs[0];
            out << "  " << printable(n.name) << "\t" << printable(n.opType) << "\t"
                << (o == kNone ? "-" : printable(g.value(o).type.toString()))
                << "\t" << formatDecimal(costs[i].flops, "") << "\t" << formatBytes(costs[i].bytes()) << "\t"
                << formatSeconds(seconds[i]) << "\t" << formatSeconds(m.distances.tlevel[i]) << "\t"
                << formatSeconds(m.distances.blevel[i]) << "\t" << (critical[i] ? "*" : "") << "\n";
        }
    }
}

}  // namespace

Command addInfoCommand(CLI::App& app)
{
    auto opts = std::make_shared<InfoOptions>();
    CLI::App* sub = app.add_subcommand("info", "Print the model summary and its graph metrics");
    addModelOptions(sub, opts->model);
    sub->add_flag("--json", opts->json, "Print JSON (schema in docs/json.md)");
    sub->add_flag("--nodes", opts->nodes, "Also list every node with its cost, t-level and b-level (text output)");

    return {sub, [opts] {
                const auto p = prepareModel(opts->model);
                if (opts->json)
                    std::cout << infoToJson(p->model, p->staticMetrics, p->machine, p->passes,
                                                 p->source->graph.nodeCount())
                                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                              << "\n";
                else
                    printText(*p, opts->nodes);
                return 0;
            }};
}

}  // namespace ramiel::cli
