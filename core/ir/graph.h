// The dataflow graph: operators (nodes) connected by tensors (values).
//
// Ids are dense indices: node i is nodes()[i], value j is values()[j]. A value
// has at most one producer (SSA); graph inputs, initializers and outer-scope
// values have none. Subgraphs of If/Loop/Scan live in their node's attributes;
// the outer values they read are listed as the node's implicit inputs, so for
// scheduling such a node is one unit with all its real dependencies.
#pragma once

#include "core/ir/tensor.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ramiel {

using NodeId = int32_t;
using ValueId = int32_t;
constexpr int32_t kNone = -1;

class Graph;

struct Attribute {
    enum class Kind { Undefined, Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs, Other };

    std::string name;
    Kind kind = Kind::Undefined;
    float f = 0;
    int64_t i = 0;
    std::string s;
    std::shared_ptr<const ramiel::Tensor> t;
    std::shared_ptr<ramiel::Graph> g;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::vector<std::shared_ptr<const ramiel::Tensor>> tensors;
    std::vector<std::shared_ptr<ramiel::Graph>> graphs;

    // Short human-readable rendering ("[1, 1]", "3", "<graph: 12 nodes>").
    std::string toString() const;

    // An attribute of one kind, for the passes that write nodes.
    static Attribute ofInt(std::string name, int64_t value);
    static Attribute ofFloat(std::string name, float value);
    static Attribute ofString(std::string name, std::string value);
    static Attribute ofInts(std::string name, std::vector<int64_t> values);
    static Attribute ofFloats(std::string name, std::vector<float> values);
};

struct Node {
    NodeId id = kNone;
    std::string name;    // unique within its graph
    std::string opType;  // "Conv"
    std::string domain;  // "" is the default ONNX domain
    std::vector<ValueId> inputs;          // kNone where an optional input is omitted
    std::vector<ValueId> outputs;         // kNone where an optional output is omitted
    std::vector<ValueId> implicitInputs;  // outer values read inside subgraphs
    std::vector<Attribute> attributes;
    int64_t opset = 0;        // version of the node's domain the model imports (0: none)
    bool schemaKnown = true;  // ONNX's registry knows this op at that opset

    const Attribute* attr(std::string_view attrName) const;
    int64_t attrInt(std::string_view attrName, int64_t fallback) const;
    float attrFloat(std::string_view attrName, float fallback) const;
    std::string attrString(std::string_view attrName, const std::string& fallback) const;
    std::vector<int64_t> attrInts(std::string_view attrName) const;  // empty when absent
    bool hasSubgraphs() const;

    // The input at `index`, or kNone when absent or omitted.
    ValueId input(size_t index) const { return index < inputs.size() ? inputs[index] : kNone; }
};

struct Value {
    ValueId id = kNone;
    std::string name;
    TensorType type;
    NodeId producer = kNone;
    std::vector<NodeId> consumers;  // each consuming node once, by id
    bool isGraphInput = false;
    bool isGraphOutput = false;
    bool isOuterScope = false;  // defined in an enclosing graph (subgraphs only)
    std::shared_ptr<const Tensor> initializer;  // set for constants held by the graph

    bool isConstant() const { return initializer != nullptr; }
};

class Graph {
public:
    std::string name;

    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<Value>& values() const { return values_; }
    const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
    Node& node(NodeId id) { return nodes_.at(static_cast<size_t>(id)); }
    const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
    Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
    size_t nodeCount() const { return nodes_.size(); }
    size_t valueCount() const { return values_.size(); }

    const std::vector<ValueId>& inputs() const { return inputs_; }
    const std::vector<ValueId>& outputs() const { return outputs_; }
    size_t initializerCount() const;

    // Looks a value up by name; kNone when absent.
    ValueId findValue(std::string_view valueName) const;
    // Creates a value; throws Error(InvalidGraph) if the name is taken.
    ValueId addValue(const std::string& valueName, TensorType type = {});
    // Returns the existing value of that name or creates it.
    ValueId valueNamed(const std::string& valueName);

    // Appends a node and links producers and consumers. Throws
    // Error(InvalidGraph) when an output already has a producer or is a graph
    // input or initializer. The node's name is made unique if needed.
    NodeId addNode(Node node);
    // Links an extra input discovered after the node was added (implicit inputs).
    void addImplicitInput(NodeId node, ValueId value);

    void addInput(ValueId v);
    void addOutput(ValueId v);
    void setInitializer(ValueId v, std::shared_ptr<const Tensor> tensor);

    // Node ids feeding / fed by a node through values (incl. implicit inputs),
    // each once, in ascending id order.
    std::vector<NodeId> predecessors(NodeId id) const;
    std::vector<NodeId> successors(NodeId id) const;

    // Nodes of this graph and of all nested subgraphs.
    size_t nodeCountRecursive() const;

private:
    void addConsumer(ValueId v, NodeId n);

    std::vector<Node> nodes_;
    std::vector<Value> values_;
    std::vector<ValueId> inputs_;
    std::vector<ValueId> outputs_;
    std::unordered_map<std::string, ValueId> valueByName_;
    std::unordered_set<std::string> nodeNames_;
    std::unordered_map<std::string, int> nextNameSuffix_;
};

}  // namespace ramiel
