#include "core/analysis/constant_sources.h"

#include "core/ir/topology.h"

namespace ramiel {

std::vector<ValueId> constantSources(const Graph& g)
{
    std::vector<ValueId> source(g.valueCount(), kNone);
    for (const Value& v : g.values())
        if (v.isConstant())
            source[size_t(v.id)] = v.id;
    for (NodeId id : buildTopology(g).order) {
        const Node& n = g.node(id);
        const bool identity = n.opType == "Identity" && (n.domain.empty() || n.domain == "ai.onnx");
        if (identity && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] != kNone && n.outputs[0] != kNone)
            source[size_t(n.outputs[0])] = source[size_t(n.inputs[0])];
    }
    return source;
}

}  // namespace ramiel
