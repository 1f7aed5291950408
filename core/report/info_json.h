// The `ramiel info --json` document (schema in docs/json.md).
#pragma once

#include "core/analysis/metrics.h"

#include <nlohmann/json.hpp>

namespace ramiel {

constexpr const char* kInfoSchema = "ramiel.info/1";

// A value's type as JSON: {"name", "dtype", "shape": [1, 3, "N", null]} (null: unknown dim).
nlohmann::json valueToJson(const Value& value);

// `model` after `passes` (in the order they ran; none: the graph as read), which left
// `nodesAsRead` nodes as `metrics.nodes`.
nlohmann::json infoToJson(const Model& model, const GraphMetrics& metrics, const MachineConstants& machine,
                          const std::vector<std::string>& passes, size_t nodesAsRead);

}  // namespace ramiel
