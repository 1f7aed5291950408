#include "core/ir/graph.h"

#include "core/util/error.h"

#include <algorithm>
#include <sstream>

namespace ramiel {

namespace {

template <typename T>
std::string listToString(const std::vector<T>& items, size_t limit = 8)
{
    std::ostringstream os;
    os << '[';
    for (size_t i = 0; i < items.size() && i < limit; ++i)
        os << (i ? ", " : "") << items[i];
    if (items.size() > limit)
        os << ", ... (" << items.size() << ")";
    os << ']';
    return os.str();
}

}  // namespace

Attribute Attribute::ofInt(std::string name, int64_t value)
{
    Attribute a;
    a.name = std::move(name);
    a.kind = Kind::Int;
    a.i = value;
    return a;
}

Attribute Attribute::ofFloat(std::string name, float value)
{
    Attribute a;
    a.name = std::move(name);
    a.kind = Kind::Float;
    a.f = value;
    return a;
}

Attribute Attribute::ofString(std::string name, std::string value)
{
    Attribute a;
    a.name = std::move(name);
    a.kind = Kind::String;
    a.s = std::move(value);
    return a;
}

Attribute Attribute::ofInts(std::string name, std::vector<int64_t> values)
{
    Attribute a;
    a.name = std::move(name);
    a.kind = Kind::Ints;
    a.ints = std::move(values);
    return a;
}

Attribute Attribute::ofFloats(std::string name, std::vector<float> values)
{
    Attribute a;
    a.name = std::move(name);
    a.kind = Kind::Floats;
    a.floats = std::move(values);
    return a;
}

std::string Attribute::toString() const
{
    switch (kind) {
    case Kind::Float: { std::ostringstream os; os << f; return os.str(); }
    case Kind::Int: return std::to_string(i);
    case Kind::String: return '"' + s + '"';
    case Kind::Tensor:
        return t ? "<tensor " + t->type().toString() + ">" : "<tensor>";
    case Kind::Graph:
        return g ? "<graph: " + std::to_string(g->nodeCount()) + " nodes>" : "<graph>";
    case Kind::Floats: return listToString(floats);
    case Kind::Ints: return listToString(ints);
    case Kind::Strings: return listToString(strings);
    case Kind::Tensors: return "<" + std::to_string(tensors.size()) + " tensors>";
    case Kind::Graphs: return "<" + std::to_string(graphs.size()) + " graphs>";
    case Kind::Undefined:
    case Kind::Other: break;
    }
    return "<?>";
}

const Attribute* Node::attr(std::string_view attrName) const
{
    for (const Attribute& a : attributes)
        if (a.name == attrName)
            return &a;
    return nullptr;
}

int64_t Node::attrInt(std::string_view attrName, int64_t fallback) const
{
    const Attribute* a = attr(attrName);
    return a && a->kind == Attribute::Kind::Int ? a->i : fallback;
}

float Node::attrFloat(std::string_view attrName, float fallback) const
{
    const Attribute* a = attr(attrName);
    return a && a->kind == Attribute::Kind::Float ? a->f : fallback;
}

std::string Node::attrString(std::string_view attrName, const std::string& fallback) const
{
    const Attribute* a = attr(attrName);
    return a && a->kind == Attribute::Kind::String ? a->s : fallback;
}

std::vector<int64_t> Node::attrInts(std::string_view attrName) const
{
    const Attribute* a = attr(attrName);
    return a && a->kind == Attribute::Kind::Ints ? a->ints : std::vector<int64_t>{};
}

bool Node::hasSubgraphs() const
{
    for (const Attribute& a : attributes)
        if ((a.kind == Attribute::Kind::Graph && a.g) || (a.kind == Attribute::Kind::Graphs && !a.graphs.empty()))
            return true;
    return false;
}

size_t Graph::initializerCount() const
{
    return static_cast<size_t>(std::count_if(values_.begin(), values_.end(),
                                             [](const Value& v) { return v.isConstant(); }));
}

ValueId Graph::findValue(std::string_view valueName) const
{
    auto it = valueByName_.find(std::string(valueName));
    return it == valueByName_.end() ? kNone : it->second;
}

ValueId Graph::addValue(const std::string& valueName, TensorType type)
{
    if (valueByName_.count(valueName))
        throw Error(ErrorKind::InvalidGraph, {}, "value '" + valueName + "' is defined twice");
    Value v;
    v.id = static_cast<ValueId>(values_.size());
    v.name = valueName;
    v.type = std::move(type);
    valueByName_.emplace(valueName, v.id);
    values_.push_back(std::move(v));
    return values_.back().id;
}

ValueId Graph::valueNamed(const std::string& valueName)
{
    ValueId id = findValue(valueName);
    return id != kNone ? id : addValue(valueName);
}

void Graph::addConsumer(ValueId v, NodeId n)
{
    auto& cs = value(v).consumers;
    if (std::find(cs.begin(), cs.end(), n) == cs.end())
        cs.push_back(n);
}

NodeId Graph::addNode(Node node)
{
    node.id = static_cast<NodeId>(nodes_.size());
    if (node.name.empty())
        node.name = node.opType + "_" + std::to_string(node.id);
    // Unique names: ONNX allows empty and repeated ones, Ramiel's reports need a key.
    if (nodeNames_.count(node.name)) {
        int& suffix = nextNameSuffix_[node.name];
        std::string candidate;
        do
            candidate = node.name + "_" + std::to_string(++suffix);
        while (nodeNames_.count(candidate));
        node.name = candidate;
    }

    for (auto out = node.outputs.begin(); out != node.outputs.end(); ++out) {
        if (*out == kNone)
            continue;
        const Value& v = value(*out);
        if (std::find(node.outputs.begin(), out, *out) != out)
            throw Error(ErrorKind::InvalidGraph, {},
                        "node '" + node.name + "' writes '" + v.name + "' as two of its outputs");
        if (v.producer != kNone)
            throw Error(ErrorKind::InvalidGraph, {},
                        "value '" + v.name + "' is produced by two nodes ('" + nodes_[v.producer].name + "' and '" +
                            node.name + "')");
        if (v.isGraphInput || v.isConstant())
            throw Error(ErrorKind::InvalidGraph, {},
                        "node '" + node.name + "' writes to '" + v.name + "', which is a graph input or initializer");
    }
    for (ValueId out : node.outputs)
        if (out != kNone)
            value(out).producer = node.id;
    for (ValueId in : node.inputs)
        if (in != kNone)
            addConsumer(in, node.id);
    for (ValueId in : node.implicitInputs)
        addConsumer(in, node.id);
    nodeNames_.insert(node.name);
    nodes_.push_back(std::move(node));
    return nodes_.back().id;
}

void Graph::addImplicitInput(NodeId n, ValueId v)
{
    auto& imp = node(n).implicitInputs;
    if (std::find(imp.begin(), imp.end(), v) == imp.end())
        imp.push_back(v);
    addConsumer(v, n);
}

void Graph::addInput(ValueId v)
{
    value(v).isGraphInput = true;
    inputs_.push_back(v);
}

void Graph::addOutput(ValueId v)
{
    value(v).isGraphOutput = true;
    outputs_.push_back(v);
}

void Graph::setInitializer(ValueId v, std::shared_ptr<const Tensor> tensor)
{
    Value& val = value(v);
    if (val.producer != kNone)
        throw Error(ErrorKind::InvalidGraph, {},
                    "initializer '" + val.name + "' is also produced by node '" + nodes_[val.producer].name + "'");
    if (val.type.dtype == DataType::Undefined || !val.type.shape)
        val.type = tensor->type();
    val.initializer = std::move(tensor);
}

std::vector<NodeId> Graph::predecessors(NodeId id) const
{
    std::vector<NodeId> out;
    const Node& n = node(id);
    auto add = [&](ValueId v) {
        if (v != kNone && value(v).producer != kNone)
            out.push_back(value(v).producer);
    };
    for (ValueId v : n.inputs)
        add(v);
    for (ValueId v : n.implicitInputs)
        add(v);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<NodeId> Graph::successors(NodeId id) const
{
    std::vector<NodeId> out;
    for (ValueId v : node(id).outputs)
        if (v != kNone)
            out.insert(out.end(), value(v).consumers.begin(), value(v).consumers.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

size_t Graph::nodeCountRecursive() const
{
    size_t n = nodes_.size();
    for (const Node& node : nodes_)
        for (const Attribute& a : node.attributes) {
            if (a.g)
                n += a.g->nodeCountRecursive();
            for (const auto& g : a.graphs)
                if (g)
                    n += g->nodeCountRecursive();
        }
    return n;
}

}  // namespace ramiel
