// Graph metrics as docs/metrics.md defines them: size, shape of the DAG (depth,
// width), work T1, span T-inf, parallelism T1/T-inf, and the critical path.
#pragma once

#include "core/analysis/cost_model.h"
#include "core/analysis/distance.h"
#include "core/ir/model.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ramiel {

struct GraphMetrics {
    size_t nodes = 0;
    size_t edges = 0;  // distinct producer->consumer node pairs
    size_t values = 0;
    size_t initializers = 0;
    double parameters = 0;      // elements held by initializers
    double parameterBytes = 0;
    std::map<std::string, size_t> opHistogram;
    int32_t depth = 0;  // number of levels
    int32_t width = 0;  // most nodes on one level
    double flops = 0;   // sum over nodes of known cost
    double bytes = 0;
    double work = 0;    // T1, seconds (nodes of unknown cost count 0)
    double span = 0;    // T-inf, seconds: the critical path with edge costs 0
    std::optional<double> parallelism;  // T1 / T-inf; absent while costs are incomplete
    std::vector<NodeId> criticalPath;
    std::vector<NodeId> unknownCostNodes;
    // Why nodes have no cost: sizes the graph's inputs leave open (set them); or, with every
    // input sized, sizes that depend on the data (after NonZero, NonMaxSuppression, a TopK
    // of a computed k), or that shape inference could not give (an operator it does not
    // know, a node that breaks its rules): only a run's measured times give those.
    enum class UnknownCosts { None, InputSizes, DataDependent, NotInferred };
    UnknownCosts unknownCosts = UnknownCosts::None;
    Distances distances;

    bool costsComplete() const { return unknownCostNodes.empty(); }
};

// "none", "input_sizes", "data_dependent" or "not_inferred" (the JSON's `unknown_costs`).
const char* unknownCostsName(GraphMetrics::UnknownCosts why);

// `costs` (FLOPs/bytes by node id) may be empty when only `seconds` are known
// (measured costs); `seconds` holds NaN for nodes of unknown cost.
GraphMetrics computeMetrics(const Graph& graph, const Topology& topo, const std::vector<NodeCost>& costs,
                            const std::vector<double>& seconds);

}  // namespace ramiel
