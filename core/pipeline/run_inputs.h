// The data a run reads: graph inputs from NumPy files (--input NAME=FILE.npy),
// seeded random data for the others. `ramiel run` and `profile`, the timing
// workers of `bench` and `tune`, and the cost measurements before planning all
// read them so, so that a model whose work depends on its data (a detector's
// suppression and pooled regions) is timed on the data the user gave.
#pragma once

#include "core/ir/model.h"
#include "core/runtime/runtime.h"

#include <map>
#include <string>
#include <vector>

namespace ramiel::pipeline {

// NAME=FILE.npy specs as a map from input name to file; throws Error(Usage) on a spec
// without a name or '='.
std::map<std::string, std::string> parseInputFiles(const std::vector<std::string>& specs);

// How a file's samples meet the run's batch, where an input's first axis counts samples.
enum class FileSamples {
    AsHeld,   // the file sets its own batch (`run`, `profile`: -b sizes the random inputs)
    ToBatch,  // the run takes `samples`: a file of one repeated, the first of more (bench, tune)
};

// The inputs of a run of `samples` samples of `model` (compiled as `compiled`): each graph
// input named in `specs` read from its file, the others seeded random data. Throws
// Error(Usage) for a name that is not a graph input or a file whose data does not fit the
// input, Error(Io) for an unreadable file.
std::vector<Tensor> runInputs(const Model& model, CompiledModel& compiled, const std::vector<std::string>& specs,
                              int samples, uint64_t seed, FileSamples fit = FileSamples::ToBatch);

}  // namespace ramiel::pipeline
