#include "core/analysis/metrics.h"

#include <cmath>

namespace ramiel {

GraphMetrics computeMetrics(const Graph& graph, const Topology& topo, const std::vector<NodeCost>& costs,
                            const std::vector<double>& seconds)
{
    GraphMetrics m;
    m.nodes = graph.nodeCount();
    m.edges = topo.edgeCount;
    m.values = graph.valueCount();
    for (const Value& v : graph.values())
        if (v.isConstant()) {
            ++m.initializers;
            const int64_t n = v.initializer->numel();
            m.parameters += n > 0 ? static_cast<double>(n) : 0.0;
            m.parameterBytes += static_cast<double>(v.initializer->data.size());
        }
    for (const Node& n : graph.nodes())
        ++m.opHistogram[n.domain.empty() ? n.opType : n.domain + "." + n.opType];
    m.depth = topo.depth();
    m.width = topo.width();

    for (size_t i = 0; i < seconds.size(); ++i) {
        if (std::isnan(seconds[i]))
            m.unknownCostNodes.push_back(static_cast<NodeId>(i));
        else
            m.work += seconds[i];
    }
    for (const NodeCost& c : costs)
        if (c.known) {
            m.flops += c.flops;
            m.bytes += c.bytes();
        }
    m.distances = computeDistances(topo, seconds);
    m.span = m.distances.span;
    m.criticalPath = m.distances.criticalPath;
    if (m.costsComplete() && m.span > 0)
        m.parallelism = m.work / m.span;
    return m;
}

}  // namespace ramiel
