// In-place edits of a Graph for the passes: remove nodes, redirect uses,
// add constants, then commit() rebuilds a compact graph (dense ids again,
// values the edits left unused dropped). Edits keep producer and consumer
// links consistent as they go, so a pass can keep reading the graph.
#pragma once

#include "core/ir/graph.h"
#include "core/ir/model.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ramiel::passes {

// A constant tensor of `type` holding `values` (T must have type's element size).
template <typename T>
std::shared_ptr<Tensor> tensorFrom(DataType type, const std::vector<T>& values, std::vector<int64_t> dims)
{
    auto t = std::make_shared<Tensor>();
    t->dtype = type;
    t->dims = std::move(dims);
    t->data.resize(values.size() * sizeof(T));
    if (!values.empty())
        std::memcpy(t->data.data(), values.data(), t->data.size());
    return t;
}

// The tensor of `v` when it is a float constant with its data loaded; nullptr otherwise.
const Tensor* floatConstant(const Graph& g, ValueId v);

// The value of `v` when it is a float constant of one element (any rank).
std::optional<float> floatScalar(const Graph& g, ValueId v);

// Adds Ramiel's domain to the model's opsets unless it is there.
void importRamielDomain(Model& model);

// The node becomes Ramiel's operator `op` (core/ir/fused_ops.h, opset 1, no ONNX
// schema); its inputs, outputs and attributes stay as they are.
void makeRamielNode(Node& n, const char* op);

class GraphEditor {
public:
    explicit GraphEditor(Graph& graph);

    Graph& graph() { return g_; }
    const Graph& graph() const { return g_; }
    bool removed(NodeId n) const { return removed_[size_t(n)]; }
    size_t removedCount() const { return removedCount_; }

    // The only consumer of `v`, or kNone when it has none or several, when `v`
    // is a graph output (its value is then needed as it is), or when that
    // consumer's subgraph reads it (readBySubgraph): the node a fusion may fold
    // `v` into.
    NodeId soleConsumer(ValueId v) const;
    // True when a subgraph reads `v` by name (an implicit input): such a value
    // can be neither renamed nor replaced.
    bool readBySubgraph(ValueId v) const;

    // Unlinks the node from its inputs and outputs; its outputs keep no producer.
    void removeNode(NodeId n);
    // Input i of node n reads v instead.
    void setInput(NodeId n, size_t i, ValueId v);
    // Output i of node n writes v instead (v must have no producer).
    void setOutput(NodeId n, size_t i, ValueId v);
    // Every node input that reads `from` reads `to` instead. Graph outputs are
    // not touched: the caller checks `from` is not one.
    void replaceUses(ValueId from, ValueId to);
    // `from` disappears into `to`: from's producer writes `to` and its readers
    // read `to`. `to` must have no producer (its old one was removed).
    void mergeInto(ValueId from, ValueId to);

    // A new constant value named after `base` (made unique).
    ValueId addConstant(const std::string& base, std::shared_ptr<const Tensor> tensor);
    // A new value named after `base` (made unique).
    ValueId addValue(const std::string& base, TensorType type = {});
    // Appends a node (its inputs and outputs linked).
    NodeId addNode(Node node);
    // Node n becomes Ramiel's one-input operator `op` (core/ir/fused_ops.h) on
    // x, its outputs kept and its attributes dropped.
    void makeRamielUnary(NodeId n, const char* op, ValueId x);

    // commit() drops `v` if by then nothing produces or reads it and it is no
    // graph input or output.
    void dropIfUnused(ValueId v) { touch(v); }

    // Rebuilds the graph without removed nodes and without values the edits
    // orphaned (no producer, no reader, not a graph input or output). Values
    // the edits did not touch stay, used or not (that is DCE's business).
    void commit();

private:
    void touch(ValueId v);
    void unlinkConsumer(ValueId v, NodeId n);
    void linkConsumer(ValueId v, NodeId n);

    Graph& g_;
    std::vector<bool> removed_;
    std::vector<bool> touched_;
    size_t removedCount_ = 0;
};

// The node reading `v`, when it is the only one (GraphEditor::soleConsumer) and an
// ONNX `op` with one output: the next step of a chain a fusion matches.
const Node* soleReader(const GraphEditor& edit, ValueId v, const char* op);

// The operand of a binary `node` that is not `v`, when `v` is one of its two inputs;
// kNone otherwise.
ValueId otherOperand(const Node& node, ValueId v);

// A name not yet used by a value of `g`, from `base`.
std::string uniqueValueName(const Graph& g, const std::string& base);

}  // namespace ramiel::passes
