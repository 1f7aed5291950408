// The body of an If, Loop or Scan node, compiled once as a model of its own
// (kernels chosen, constants converted, nested bodies compiled in turn) and
// run on the calling thread. Reentrant: copies of the node on several workers
// may run the same body at once.
#pragma once

#include "core/runtime/torch/compiled_model.h"

#include <memory>
#include <string>
#include <vector>

namespace ramiel {

class CompiledSubgraph {
public:
    // `node` owns the body in `attribute`; `parent` is the graph the node is in.
    // Outer-scope values the body reads are matched by name to the node's
    // implicit inputs. Throws Error as TorchCompiledModel does, the message
    // naming the node and the body.
    CompiledSubgraph(const Graph& parent, const Node& node, const Graph& body, const std::string& attribute);

    size_t inputCount() const { return model_->graph().inputs().size(); }
    size_t outputCount() const { return model_->graph().outputs().size(); }
    // The element type the body declares for output i (Undefined when not known).
    DataType outputType(size_t i) const;

    // Runs the body: `inputs` by body input, outer-scope values taken from
    // `nodeInputs` (the node's inputs followed by its implicit inputs).
    std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& nodeInputs) const;

private:
    std::shared_ptr<TorchCompiledModel> model_;
    std::vector<std::pair<ValueId, size_t>> outer_;  // body value -> index into the node's inputs
    std::vector<int> uses_;                          // reads per value (a value is dropped after its last)
};

}  // namespace ramiel
