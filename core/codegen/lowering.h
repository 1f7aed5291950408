// ONNX nodes -> expression trees (expr.h), the same for both generators.
// Each translation follows the runtime's kernel for that operator
// (core/runtime/torch/kernels_*.cpp) so generated code computes what the
// runtime computes. Shape-dependent choices (pads, ranks) are resolved here
// from the model's inferred shapes.
#pragma once

#include "core/codegen/expr.h"
#include "core/ir/model.h"

#include <map>
#include <memory>
#include <set>
#include <vector>

namespace ramiel::codegen {

// One branch of an If, or a Loop's or Scan's body: a graph of its own, generated as a function of
// the enclosing graph's values it reads (`outer`, its values read there; `params`, the same values
// in the enclosing graph). A body's `outer` starts with its own inputs: a Loop's iteration and
// condition (`params` kNone) and carried values, a Scan's states and scan slices (`params` the
// node's inputs they start from).
struct LoweredBranch {
    NodeId node = kNone;    // the If or Loop
    bool then = true;       // then_branch, else else_branch
    std::shared_ptr<const Graph> graph;
    std::vector<ValueId> outer;   // in `graph`
    std::vector<ValueId> params;  // in the enclosing graph, in the same order
    bool body = false;            // a Loop's or Scan's body
};

struct LoweredModel {
    std::vector<Expr> nodeExpr;  // by node id: its first output; Kind::None for Constant nodes (no code)
    // By node id: 1, or K > 1 where nodeExpr gives a sequence of K values: outputs 0..K-1 (a
    // Split's parts), of which the node may list fewer (an LSTM's Y and Y_h, not Y_c).
    std::vector<size_t> outputCount;
    std::map<ValueId, std::shared_ptr<const Tensor>> constants;  // initializers and Constant outputs
    std::vector<ValueId> weights;  // the constants the code reads, in order of first use
    std::set<ValueId> channelsLast;  // weights of 2-D convolutions, laid out channels-last at load
    std::vector<ValueId> inputs;   // graph inputs that are not constants
    std::vector<LoweredBranch> branches;  // the If branches the nodes call (Expr::branch's index)
    bool isConstant(ValueId v) const { return constants.count(v) != 0; }
    // v's value where it is a constant, else null.
    const Tensor* constant(ValueId v) const
    {
        const auto it = constants.find(v);
        return it == constants.end() ? nullptr : it->second.get();
    }
};

// Throws Error(Unsupported) naming the operator and the node for anything the
// generators cannot translate (before anything is written). `batch`: the samples
// forward() runs at once (the model's shapes are at batch 1; each copy runs fewer).
LoweredModel lowerModel(const Model& model, int batch);

// The values node `id`'s expression gives, in order (kNone for an output the model leaves out
// or does not list).
std::vector<ValueId> computedValues(const Graph& g, const LoweredModel& low, NodeId id);

// The operators lowerModel translates, sorted.
std::vector<std::string> codegenOperators();

}  // namespace ramiel::codegen
