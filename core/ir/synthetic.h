// Random DAGs for property tests and benchmarks: layered graphs whose nodes
// read from one to `maxFanIn` nodes of earlier layers.
#pragma once

#include "core/ir/graph.h"

#include <cstdint>
#include <vector>

namespace ramiel {

struct SyntheticDag {
    Graph graph;
    std::vector<double> seconds;  // cost per node, 1 us .. 1 ms, log-uniform
};

// Deterministic for a seed. `width` bounds the nodes per layer.
SyntheticDag randomDag(int nodes, uint64_t seed, int width = 16, int maxFanIn = 3);

}  // namespace ramiel
