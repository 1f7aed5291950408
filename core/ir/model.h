// A loaded model: the main graph plus what the file says about itself.
#pragma once

#include "core/ir/graph.h"

#include <string>
#include <vector>

namespace ramiel {

struct OpsetImport {
    std::string domain;  // "" is the default ONNX domain
    int64_t version = 0;
};

// A graph input whose symbolic batch was read as one sample (its first size
// set to 1 at import; ImportOptions::oneSampleForSymbolicBatch).
struct OneSampleInput {
    std::string name;
    std::string batchSymbol;  // the file's name for that size; empty if it has none
};

struct Model {
    std::string path;  // as given by the user; empty for in-memory models
    int64_t irVersion = 0;
    std::string producerName;
    std::string producerVersion;
    std::vector<OpsetImport> opsets;
    Graph graph;
    // Problems that do not stop the model from loading: unknown operator
    // domains, checker complaints, shapes that inference could not find.
    std::vector<std::string> warnings;
    std::vector<OneSampleInput> oneSampleInputs;

    // The opset version imported for a domain ("" and "ai.onnx" are the same); 0 if none.
    int64_t opsetVersion(const std::string& domain = "") const;
    // The input of that name if its symbolic batch was read as one sample; null otherwise.
    const OneSampleInput* oneSampleInput(const std::string& name) const;
};

}  // namespace ramiel
