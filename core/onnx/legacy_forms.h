// Operators whose meaning at an old opset differs from what the runtime, the passes and
// the code generators read, rewritten on import so that an old model computes what its
// operators meant:
// - broadcasting before opset 7: Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater
//   and Less with broadcast = 1 and an axis line B's dimensions up with A's from that
//   axis (B [3] on A [2, 3, 4, 5] at axis 1 is per channel). B gets trailing dimensions
//   of 1 (a reshaped copy of a constant, else an Unsqueeze node) and the axis goes;
// - PRelu before opset 7 applies a slope of C values per channel (axis 1), as PyTorch's
//   exporter and Caffe2 meant it; the slope gets trailing 1s the same way;
// - Concat before opset 4 joins along axis 1 when it names none: the axis is written out.
// A broadcast whose ranks are unknown keeps its axis, and validateNodes refuses it.
//
// Before that, on the file's protobuf (so that ONNX's shape inference sees standard operators):
// ImageScaler, an experimental operator of opsets 1-9 that ONNX's registry no longer has
// (old exports of YOLO and other vision models start with it), becomes the Mul by its scale and
// the Add of its per-channel bias it stands for.
#pragma once

#include "core/ir/graph.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace ramiel {

// Replaces ImageScaler nodes of `graph` (not its subgraphs) by Mul and Add; `opset` is the
// model's ONNX opset, `irVersion` its IR version.
void replaceDeprecatedOperators(onnx::GraphProto& graph, int64_t opset, int64_t irVersion);

// Rewrites `g` and its subgraphs. Node opsets must be set (checkSchemas).
void rewriteLegacyForms(Graph& g);

// Why `n` still broadcasts as before opset 7 (an axis that could not be rewritten);
// empty when it does not.
std::string legacyBroadcastProblem(const Graph& g, const Node& n);

}  // namespace ramiel
