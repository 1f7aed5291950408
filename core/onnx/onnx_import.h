// ONNX -> Ramiel IR. Parses the file, follows external data, runs ONNX's
// checker and shape inference, and builds the graph. Every failure is an
// Error naming the file and the problem; nothing here may crash on bad input.
#pragma once

#include "core/ir/model.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ramiel {

struct ImportOptions {
    // Fixed sizes for graph inputs with symbolic or unknown dimensions
    // (`--shape input=1,3,224,224`). A name that is not a graph input, or a
    // rank that differs from the model's, is an Error(Usage).
    std::map<std::string, std::vector<int64_t>> inputShapes;
    // Sizes for an input the model leaves open (a dimension without a size) and inputShapes
    // does not name, from the data a run will read (`--input` files): called with the
    // input's name, it returns the sizes or nothing. They fill the dimensions without a size
    // (a symbolic batch stays for oneSampleForSymbolicBatch) where the rank is the model's;
    // otherwise they are ignored (the run checks the data against the input).
    std::function<std::optional<std::vector<int64_t>>(const std::string&)> openInputSizes;
    // Read an input whose only unknown size is its first (a symbolic batch,
    // rank 2 or more) as one sample: that size becomes 1 and the input is
    // listed in Model::oneSampleInputs. Inputs in inputShapes keep those.
    bool oneSampleForSymbolicBatch = false;
    bool inferShapes = true;
    bool runChecker = true;
    // Read external-data files. When false, such tensors keep their type and
    // name the file in Tensor::externalLocation but hold no data.
    bool loadExternalData = true;
};

// The ONNX library's version ("1.12.0"), from its version header.
std::string onnxVersion();

// Loads the model at `path`.
Model loadOnnx(const std::string& path, const ImportOptions& options = {});

// Loads a model from bytes in memory. `displayName` is used in messages,
// `baseDir` resolves external-data locations (empty: external data is an error
// unless options.loadExternalData is false).
Model loadOnnxFromBytes(std::string_view bytes, const std::string& displayName, const std::string& baseDir,
                        const ImportOptions& options = {});

// Reads a serialized onnx.TensorProto (the conformance suite's input_N.pb /
// output_N.pb files). Throws Error(Io) / Error(NotOnnx).
Tensor readTensorProto(const std::string& path);

// Parses "1,3,224,224" (also "1x3x224x224"); throws Error(Usage).
std::vector<int64_t> parseDims(const std::string& text);

// Parses "name=1,3,224,224" into options.inputShapes; throws Error(Usage).
void addInputShape(ImportOptions& options, const std::string& spec);

}  // namespace ramiel
