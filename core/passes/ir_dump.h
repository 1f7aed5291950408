// A readable text form of a model's main graph, for --dump-after: one line
// per node in topological order, "name = Op(inputs) [attributes] -> outputs".
#pragma once

#include "core/ir/model.h"

#include <string>

namespace ramiel::passes {

std::string dumpModel(const Model& model);

}  // namespace ramiel::passes
