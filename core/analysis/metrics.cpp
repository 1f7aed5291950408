#include "core/analysis/metrics.h"

#include "core/ir/output_sizes.h"

#include <algorithm>
#include <cmath>

namespace ramiel {

namespace {

// An input's sizes open; else the first nodes without sizes (their inputs sized, an output
// not) all size their outputs by the data, or some could not be sized by shape inference.
GraphMetrics::UnknownCosts whyUnknown(const Graph& g, const std::vector<NodeId>& unknown)
{
    using Why = GraphMetrics::UnknownCosts;
    auto sized = [&g](ValueId v) {
        return v == kNone || (g.value(v).type.shape && g.value(v).type.shape->isFullyKnown());
    };
    for (ValueId v : g.inputs())
        if (!g.value(v).isConstant() && !sized(v))
            return Why::InputSizes;
    for (NodeId id : unknown) {
        const Node& n = g.node(id);
        if (!std::all_of(n.inputs.begin(), n.inputs.end(), sized))
            continue;  // unsized because its inputs are
        bool byData = sizesFollowTheData(n);
        if (const std::vector<size_t>* deciding = sizeDecidingInputs(n))
            for (size_t i : *deciding)
                byData = byData || (i < n.inputs.size() && n.inputs[i] != kNone && !g.value(n.inputs[i]).isConstant());
        if (!byData)
            return Why::NotInferred;
    }
    return Why::DataDependent;
}

}  // namespace

const char* unknownCostsName(GraphMetrics::UnknownCosts why)
{
    switch (why) {
    case GraphMetrics::UnknownCosts::InputSizes: return "input_sizes";
    case GraphMetrics::UnknownCosts::DataDependent: return "data_dependent";
    case GraphMetrics::UnknownCosts::NotInferred: return "not_inferred";
    case GraphMetrics::UnknownCosts::None: break;
    }
    return "none";
}

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
    if (!m.unknownCostNodes.empty())
        m.unknownCosts = whyUnknown(graph, m.unknownCostNodes);
    m.distances = computeDistances(topo, seconds);
    m.span = m.distances.span;
    m.criticalPath = m.distances.criticalPath;
    if (m.costsComplete() && m.span > 0)
        m.parallelism = m.work / m.span;
    return m;
}

}  // namespace ramiel
