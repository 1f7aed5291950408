#include "core/passes/ir_dump.h"

#include "core/ir/topology.h"
#include "core/util/text.h"

namespace ramiel::passes {

std::string dumpModel(const Model& model)
{
    const Graph& g = model.graph;
    std::string out = "graph '" + printable(g.name) + "': " + std::to_string(g.nodeCount()) + " nodes, " +
                      std::to_string(g.initializerCount()) + " initializers\n";
    auto valueText = [&](ValueId v) {
        if (v == kNone)
            return std::string("-");
        const Value& value = g.value(v);
        return "%" + printable(value.name) + (value.isConstant() ? "(const " : "(") + value.type.toString() + ")";
    };
    out += "  inputs:";
    for (ValueId v : g.inputs())
        out += " " + valueText(v);
    out += "\n";
    for (NodeId id : buildTopology(g).order) {
        const Node& n = g.node(id);
        std::string line = "  " + printable(n.name) + " = " + (n.domain.empty() ? "" : printable(n.domain) + ".") +
                           printable(n.opType) + "(";
        for (size_t i = 0; i < n.inputs.size(); ++i)
            line += (i ? ", " : "") + valueText(n.inputs[i]);
        line += ")";
        if (!n.attributes.empty()) {
            line += " {";
            for (size_t i = 0; i < n.attributes.size(); ++i)
                line += (i ? ", " : "") + printable(n.attributes[i].name) + "=" + printable(n.attributes[i].toString());
            line += "}";
        }
        line += " ->";
        for (ValueId v : n.outputs)
            line += " " + valueText(v);
        out += line + "\n";
    }
    out += "  outputs:";
    for (ValueId v : g.outputs())
        out += " " + valueText(v);
    return out + "\n";
}

}  // namespace ramiel::passes
