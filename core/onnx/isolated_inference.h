// Runs ONNX's checker and shape inference in a child process. ONNX's C++ code
// (1.12 here) can crash or loop on malformed models (a Scan without its
// required attributes dereferences null, found by tests/fuzz/); isolated, such
// a failure costs the shapes, not the process.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace ramiel {

struct InferenceRequest {
    bool runChecker = true;
    bool inferShapes = true;
    int timeoutSeconds = 120;
};

// Copies the inferred types (value_info and output types, in every subgraph)
// into `model`; the checker's complaint, a crash or a time-out become warnings.
void checkAndInferShapes(onnx::ModelProto& model, const InferenceRequest& request,
                         std::vector<std::string>& warnings);

}  // namespace ramiel
