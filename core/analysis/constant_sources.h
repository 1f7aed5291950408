// Which values of a graph are constants by another name: PyTorch's exporter shares
// equal initializers through Identity nodes (a bias of zeros, most often), so that a
// convolution may read its weights or bias through one or a chain of them. The runtime
// prepares such a node as one that reads the initializer itself, and the exported code
// hands the initializer to its helpers (conv2d, linear).
#pragma once

#include "core/ir/graph.h"

namespace ramiel {

// By value id: the constant the value is (its own id for a constant; the constant an
// Identity, or a chain of them, passes on), kNone for every other value.
std::vector<ValueId> constantSources(const Graph& g);

}  // namespace ramiel
