// Ramiel IR -> ONNX. Writes what the passes made as a standard model: nodes in
// topological order, initializers inline, types of every value as value_info,
// and Ramiel's private fused operators (core/ir/fused_ops.h) written back as
// the ONNX operators they stand for, so onnx.checker and other runtimes take
// the file.
#pragma once

#include "core/ir/model.h"

#include <string>

namespace ramiel {

// The serialized ModelProto. Throws Error(Unsupported) for what ONNX cannot
// hold from this IR (string initializers, external data that was not loaded,
// more than 2 GiB).
std::string exportOnnx(const Model& model);

// Writes exportOnnx(model) to `path` atomically; Error(Io) names the path.
void saveOnnx(const Model& model, const std::string& path);

}  // namespace ramiel
