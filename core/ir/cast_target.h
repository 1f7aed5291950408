// The element type a Cast node converts to. Since opset 6 its `to` attribute is
// ONNX's TensorProto.DataType code; before, the code's name ("FLOAT", "INT64").
// The runtime's kernel, code generation and the passes read it here.
#pragma once

#include "core/ir/data_type.h"
#include "core/ir/graph.h"

namespace ramiel {

// Undefined when the attribute is missing or names no type.
DataType castTarget(const Node& n);

}  // namespace ramiel
