#include "core/passes/graph_editor.h"

#include "core/ir/fused_ops.h"

#include "core/util/error.h"

#include <algorithm>

namespace ramiel::passes {

std::string uniqueValueName(const Graph& g, const std::string& base)
{
    if (g.findValue(base) == kNone)
        return base;
    for (int i = 1;; ++i) {
        std::string candidate = base + "_" + std::to_string(i);
        if (g.findValue(candidate) == kNone)
            return candidate;
    }
}

GraphEditor::GraphEditor(Graph& graph) : g_(graph), removed_(graph.nodeCount(), false), touched_(graph.valueCount(), false)
{
}

NodeId GraphEditor::soleConsumer(ValueId v) const
{
    const Value& value = g_.value(v);
    if (value.isGraphOutput || value.consumers.size() != 1 || readBySubgraph(v))
        return kNone;
    return value.consumers.front();
}

bool GraphEditor::readBySubgraph(ValueId v) const
{
    for (NodeId c : g_.value(v).consumers) {
        const auto& imp = g_.node(c).implicitInputs;
        if (std::find(imp.begin(), imp.end(), v) != imp.end())
            return true;
    }
    return false;
}

void GraphEditor::touch(ValueId v)
{
    if (v == kNone)
        return;
    if (touched_.size() <= size_t(v))
        touched_.resize(g_.valueCount(), false);
    touched_[size_t(v)] = true;
}

void GraphEditor::unlinkConsumer(ValueId v, NodeId n)
{
    if (v == kNone)
        return;
    const Node& node = g_.node(n);
    // A node is listed once per value even when it reads it several times.
    const bool stillReads = std::count(node.inputs.begin(), node.inputs.end(), v) +
                                std::count(node.implicitInputs.begin(), node.implicitInputs.end(), v) >
                            0;
    if (stillReads)
        return;
    auto& cs = g_.value(v).consumers;
    cs.erase(std::remove(cs.begin(), cs.end(), n), cs.end());
    touch(v);
}

void GraphEditor::linkConsumer(ValueId v, NodeId n)
{
    if (v == kNone)
        return;
    auto& cs = g_.value(v).consumers;
    if (std::find(cs.begin(), cs.end(), n) == cs.end())
        cs.push_back(n);
    touch(v);
}

void GraphEditor::removeNode(NodeId n)
{
    if (removed_[size_t(n)])
        return;
    Node& node = g_.node(n);
    std::vector<ValueId> reads = node.inputs;
    reads.insert(reads.end(), node.implicitInputs.begin(), node.implicitInputs.end());
    node.inputs.clear();
    node.implicitInputs.clear();
    for (ValueId v : reads)
        unlinkConsumer(v, n);
    for (ValueId v : node.outputs)
        if (v != kNone) {
            g_.value(v).producer = kNone;
            touch(v);
        }
    removed_[size_t(n)] = true;
    ++removedCount_;
}

void GraphEditor::setInput(NodeId n, size_t i, ValueId v)
{
    Node& node = g_.node(n);
    if (node.inputs.size() <= i)
        node.inputs.resize(i + 1, kNone);
    const ValueId old = node.inputs[i];
    node.inputs[i] = v;
    unlinkConsumer(old, n);
    linkConsumer(v, n);
}

void GraphEditor::setOutput(NodeId n, size_t i, ValueId v)
{
    Node& node = g_.node(n);
    if (v != kNone && g_.value(v).producer != kNone)
        throw Error(ErrorKind::Internal, {}, "pass wrote value '" + g_.value(v).name + "' that already has a producer");
    if (node.outputs.size() <= i)
        node.outputs.resize(i + 1, kNone);
    const ValueId old = node.outputs[i];
    if (old != kNone) {
        g_.value(old).producer = kNone;
        touch(old);
    }
    node.outputs[i] = v;
    if (v != kNone) {
        g_.value(v).producer = n;
        touch(v);
    }
}

void GraphEditor::replaceUses(ValueId from, ValueId to)
{
    const std::vector<NodeId> readers = g_.value(from).consumers;
    for (NodeId c : readers) {
        Node& node = g_.node(c);
        for (size_t i = 0; i < node.inputs.size(); ++i)
            if (node.inputs[i] == from)
                node.inputs[i] = to;
        unlinkConsumer(from, c);
        linkConsumer(to, c);
    }
}

void GraphEditor::mergeInto(ValueId from, ValueId to)
{
    const NodeId p = g_.value(from).producer;
    replaceUses(from, to);
    if (p != kNone) {
        Node& node = g_.node(p);
        for (size_t i = 0; i < node.outputs.size(); ++i)
            if (node.outputs[i] == from)
                setOutput(p, i, to);
    }
}

ValueId GraphEditor::addValue(const std::string& base, TensorType type)
{
    const ValueId v = g_.addValue(uniqueValueName(g_, base), std::move(type));
    touch(v);
    return v;
}

ValueId GraphEditor::addConstant(const std::string& base, std::shared_ptr<const Tensor> tensor)
{
    const ValueId v = addValue(base, tensor->type());
    g_.setInitializer(v, std::move(tensor));
    return v;
}

const Tensor* floatConstant(const Graph& g, ValueId v)
{
    if (v == kNone || !g.value(v).isConstant())
        return nullptr;
    const Tensor* t = g.value(v).initializer.get();
    return t->dtype == DataType::Float && t->hasData() ? t : nullptr;
}

std::optional<float> floatScalar(const Graph& g, ValueId v)
{
    const Tensor* t = floatConstant(g, v);
    if (!t || t->numel() != 1)
        return std::nullopt;
    return t->at<float>(0);
}

void makeRamielNode(Node& n, const char* op)
{
    n.domain = kRamielDomain;
    n.opType = op;
    n.opset = 1;
    n.schemaKnown = false;
}

void importRamielDomain(Model& model)
{
    if (model.opsetVersion(kRamielDomain) == 0)
        model.opsets.push_back({kRamielDomain, 1});
}

void GraphEditor::makeRamielUnary(NodeId n, const char* op, ValueId x)
{
    for (size_t i = 0; i < g_.node(n).inputs.size(); ++i)
        setInput(n, i, i == 0 ? x : kNone);
    Node& node = g_.node(n);
    node.inputs.resize(1);
    makeRamielNode(node, op);
    node.attributes.clear();
}

NodeId GraphEditor::addNode(Node node)
{
    for (ValueId v : node.inputs)
        touch(v);
    for (ValueId v : node.outputs)
        touch(v);
    const NodeId n = g_.addNode(std::move(node));
    removed_.resize(g_.nodeCount(), false);
    return n;
}

void GraphEditor::commit()
{
    const Graph& old = g_;
    touched_.resize(old.valueCount(), false);
    Graph fresh;
    fresh.name = old.name;

    std::vector<ValueId> map(old.valueCount(), kNone);
    for (const Value& v : old.values()) {
        const bool orphan = touched_[size_t(v.id)] && v.producer == kNone && v.consumers.empty() &&
                            !v.isGraphInput && !v.isGraphOutput;
        if (orphan)
            continue;
        const ValueId id = fresh.addValue(v.name, v.type);
        map[size_t(v.id)] = id;
        if (v.initializer)
            fresh.setInitializer(id, v.initializer);
        fresh.value(id).isOuterScope = v.isOuterScope;
    }
    auto mapped = [&](ValueId v) -> ValueId {
        if (v == kNone)
            return kNone;
        if (map[size_t(v)] == kNone)
            throw Error(ErrorKind::Internal, {}, "a pass left value '" + old.value(v).name + "' in use but dropped it");
        return map[size_t(v)];
    };
    for (ValueId v : old.inputs())
        fresh.addInput(mapped(v));
    for (const Node& n : old.nodes()) {
        if (removed_[size_t(n.id)])
            continue;
        Node copy = n;
        copy.id = kNone;
        for (ValueId& v : copy.inputs)
            v = mapped(v);
        for (ValueId& v : copy.outputs)
            v = mapped(v);
        for (ValueId& v : copy.implicitInputs)
            v = mapped(v);
        fresh.addNode(std::move(copy));
    }
    for (ValueId v : old.outputs())
        fresh.addOutput(mapped(v));

    g_ = std::move(fresh);
    removed_.assign(g_.nodeCount(), false);
    touched_.assign(g_.valueCount(), false);
    removedCount_ = 0;
}

const Node* soleReader(const GraphEditor& edit, ValueId v, const char* op)
{
    const NodeId n = v == kNone ? kNone : edit.soleConsumer(v);
    if (n == kNone)
        return nullptr;
    const Node& node = edit.graph().node(n);
    if (node.opType != op || !node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] == kNone)
        return nullptr;
    return &node;
}

ValueId otherOperand(const Node& node, ValueId v)
{
    if (node.inputs.size() != 2)
        return kNone;
    return node.inputs[0] == v ? node.inputs[1] : node.inputs[1] == v ? node.inputs[0] : kNone;
}

}  // namespace ramiel::passes
