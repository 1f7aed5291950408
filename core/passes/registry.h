// The pass registry: one ordered table of every pass. The CLI's --passes and
// --list-passes, the GUI's checkboxes and docs/passes.md are all made from it.
#pragma once

#include "core/passes/pass.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ramiel::passes {

struct PassInfo {
    std::string name;     // kebab-case, as --passes takes it
    std::string summary;  // one line
    bool onByDefault = false;
    std::vector<std::string> requires;  // passes that must run before (added by parsePassList)
    std::function<std::unique_ptr<Pass>()> create;
};

// Every pass, in the order a pipeline runs them.
const std::vector<PassInfo>& registeredPasses();
// Throws Error(Usage) listing the known names.
const PassInfo& findPass(const std::string& name);

// "default", "none", "all", or a comma list "a,b" (may mix in "default").
// Returns names in table order, each once, with their requirements added.
// Throws Error(Usage) on unknown names.
std::vector<std::string> parsePassList(const std::string& spec);

struct PipelineResult {
    std::vector<std::pair<std::string, PassStats>> stats;  // one per pass run
};

// Runs the listed passes in table order on `model` (in place); calls
// dump(name, model) after each pass if set. First checks every node
// (validateNodes, core/onnx/node_checks.h), also when `names` is empty.
PipelineResult runPipeline(Model& model, const std::vector<std::string>& names, const PassContext& context,
                           const std::function<void(const std::string&, const Model&)>& dump = {});

// The table as text, one pass a line (ramiel optimize --list-passes).
std::string describePasses();

// Passes that ran (as parsePassList gives them), in words: "the default passes", "no passes",
// or "passes dce, fuse-pad".
std::string passesRunText(const std::vector<std::string>& ran);

}  // namespace ramiel::passes
