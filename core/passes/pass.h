// A graph optimization pass: a small class with one `run` that rewrites a
// Model in place and reports what it did. Passes are named and ordered in one
// table (registry.h); the CLI, the GUI and docs/passes.md all read that table.
#pragma once

#include "core/ir/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ramiel::passes {

struct PassStats {
    int nodesBefore = 0, nodesAfter = 0, removed = 0, added = 0, fused = 0;
    double seconds = 0;
    std::string detail;  // one line, e.g. "folded 12 nodes into 9 initializers"
};

// What passes may need beyond the model.
struct PassContext {
    // Quantization calibration: sample inputs, each a full set in graph-input
    // order. Empty: the pass draws `calibrationSamples` seeded random sets.
    std::vector<std::vector<Tensor>> calibrationInputs;
    int calibrationSamples = 4;
    uint64_t seed = 0;
    // Constant folding evaluates nodes with the runtime's kernels
    // (ramiel::runtime()); false leaves nodes that need it unfolded.
    bool useRuntime = true;
    // Ramiel runs batches by scaling the first dimension of the graph inputs
    // (ramiel run -b, hyperclustering). While true, folding never bakes that
    // dimension into a constant: Shape folds only the sizes after the first.
    bool batchDynamic = true;
};

class Pass {
public:
    virtual ~Pass() = default;
    // Rewrites `model` in place. nodesBefore/After and seconds are filled in
    // by runPipeline; a pass reports removed, added, fused and a detail line.
    virtual PassStats run(Model& model, const PassContext& context) = 0;
};

}  // namespace ramiel::passes
