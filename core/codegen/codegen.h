// Code generation: readable, runnable parallel code from a model and its
// schedule (docs/codegen.md). Python+PyTorch writes run.py; C++/libtorch
// writes main.cpp and CMakeLists.txt; both write weights.bin beside them.
#pragma once

#include "core/ir/model.h"
#include "core/ir/topology.h"
#include "core/schedule/schedule.h"

#include <string>
#include <vector>

namespace ramiel {

enum class CodeLanguage { Python, Cpp };

// "python" / "cpp"; throws Error(Usage) naming both for anything else.
CodeLanguage codeLanguageFromName(const std::string& name);

struct CodegenRequest {
    const Model* model = nullptr;
    const Topology* topo = nullptr;
    const Schedule* schedule = nullptr;  // its workerThreads: each worker's intra-op threads
    CodeLanguage language = CodeLanguage::Python;
    std::string outputDir;  // created if missing
    std::string command;    // the command line that made the code, for the header comment
    double bound = 0;       // the schedule's speedup bound (serial cost / max(span, work / P)); 0: unknown
};

struct CodegenResult {
    std::vector<std::string> files;  // written, in order
    size_t weightBytes = 0;
    size_t weights = 0;
    size_t slots = 0;  // cross-cluster values (one-shot slots) per run
};

// Throws Error(Unsupported) for an operator the generators lack (before
// anything is written), Error(Usage) for a schedule that fails validate(),
// Error(Io) naming the folder or file that cannot be written.
CodegenResult generateCode(const CodegenRequest& request);

}  // namespace ramiel
