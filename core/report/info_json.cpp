#include "core/report/info_json.h"

#include "core/util/version.h"

namespace ramiel {

nlohmann::json valueToJson(const Value& v)
{
    nlohmann::json j = {{"name", v.name}, {"dtype", dataTypeName(v.type.dtype)}};
    if (v.type.shape) {
        nlohmann::json dims = nlohmann::json::array();
        for (const Dim& d : v.type.shape->dims) {
            if (d.isKnown())
                dims.push_back(d.value);
            else if (!d.symbol.empty())
                dims.push_back(d.symbol);
            else
                dims.push_back(nullptr);
        }
        j["shape"] = dims;
    } else {
        j["shape"] = nullptr;
    }
    return j;
}

nlohmann::json infoToJson(const Model& model, const GraphMetrics& m, const MachineConstants& machine,
                          const std::vector<std::string>& passes, size_t nodesAsRead)
{
    const Graph& g = model.graph;
    auto names = [&](const std::vector<NodeId>& ids) {
        nlohmann::json a = nlohmann::json::array();
        for (NodeId id : ids)
            a.push_back(g.node(id).name);
        return a;
    };
    nlohmann::json opsets = nlohmann::json::object();
    for (const OpsetImport& o : model.opsets)
        opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (ValueId v : g.inputs()) {
        if (g.value(v).isConstant())
            continue;
        nlohmann::json input = valueToJson(g.value(v));
        if (const OneSampleInput* s = model.oneSampleInput(g.value(v).name))
            input["symbolic_batch"] = s->batchSymbol;
        inputs.push_back(input);
    }
    for (ValueId v : g.outputs())
        outputs.push_back(valueToJson(g.value(v)));
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [op, count] : m.opHistogram)
        histogram[op] = count;
    nlohmann::json criticalOps = nlohmann::json::array();
    for (NodeId id : m.criticalPath)
        criticalOps.push_back(g.node(id).opType);

    return {
        {"schema", kInfoSchema},
        {"ramiel_version", kVersion},
        {"model",
         {{"path", model.path},
          {"ir_version", model.irVersion},
          {"producer", model.producerName + (model.producerVersion.empty() ? "" : " " + model.producerVersion)},
          {"graph_name", g.name},
          {"opsets", opsets}}},
        {"inputs", inputs},
        {"outputs", outputs},
        {"passes", passes},
        {"nodes_as_read", nodesAsRead},
        {"nodes", m.nodes},
        {"nodes_in_subgraphs", g.nodeCountRecursive() - g.nodeCount()},
        {"edges", m.edges},
        {"values", m.values},
        {"initializers", m.initializers},
        {"parameters", m.parameters},
        {"parameter_bytes", m.parameterBytes},
        {"op_histogram", histogram},
        {"depth", m.depth},
        {"width", m.width},
        {"flops", m.flops},
        {"bytes", m.bytes},
        {"work", m.work},
        {"span", m.span},
        {"parallelism", m.parallelism ? nlohmann::json(*m.parallelism) : nlohmann::json(nullptr)},
        {"critical_path", names(m.criticalPath)},
        {"critical_path_ops", criticalOps},
        {"critical_path_length", m.span},
        {"costs_complete", m.costsComplete()},
        {"unknown_cost_nodes", names(m.unknownCostNodes)},
        {"unknown_costs", unknownCostsName(m.unknownCosts)},
        {"cost_model",
         {{"kind", "static"},
          {"formula", "overhead + max(flops / flops_per_second, bytes / bytes_per_second)"},
          {"flops_per_second", machine.flopsPerSecond},
          {"bytes_per_second", machine.bytesPerSecond},
          {"overhead_seconds", machine.overheadSeconds},
          {"source", machine.source}}},
        {"warnings", model.warnings},
    };
}

}  // namespace ramiel
