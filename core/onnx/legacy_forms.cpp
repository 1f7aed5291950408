#include "core/onnx/legacy_forms.h"

#include "core/passes/graph_editor.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

namespace ramiel {

namespace {

bool before(const Node& n, int64_t opset) { return n.domain.empty() && n.opset > 0 && n.opset < opset; }
bool before7(const Node& n) { return before(n, 7); }

bool legacyBinary(const Node& n)
{
    static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow", "And",
                                              "Or",  "Xor", "Equal", "Greater", "Less"};
    return before7(n) && ops.count(n.opType) && n.inputs.size() == 2 && n.attrInt("broadcast", 0) == 1;
}

// A node whose broadcasting meant something else before opset 7: a binary operator's from an
// axis, PRelu's slope.
bool broadcastsAsBefore7(const Node& n)
{
    return (legacyBinary(n) && n.attr("axis")) || (before7(n) && n.opType == "PRelu");
}

std::optional<int64_t> rankOf(const Graph& g, ValueId v)
{
    if (v == kNone || !g.value(v).type.shape)
        return std::nullopt;
    return int64_t(g.value(v).type.shape->rank());
}

// How many trailing dimensions of 1 input 1 needs for numpy's broadcasting to mean what
// the node meant; nullopt when that cannot be known (or the axis is out of range).
std::optional<int64_t> trailingOnes(const Graph& g, const Node& n)
{
    const auto a = rankOf(g, n.input(0)), b = rankOf(g, n.input(1));
    if (legacyBinary(n) && n.attr("axis")) {
        const int64_t axis = n.attrInt("axis", 0);
        if (!a || !b || axis < 0 || axis + *b > *a)
            return std::nullopt;
        return *a - axis - *b;
    }
    if (before7(n) && n.opType == "PRelu" && b == 1) {
        const auto& slope = g.value(n.input(1)).type.shape->dims[0];
        if (slope.isKnown() && slope.value == 1)
            return 0;  // one slope for every element
        if (!a)
            return std::nullopt;
        return *a >= 3 ? *a - 2 : 0;
    }
    return 0;
}

// Input 1 of node `id` with `ones` trailing dimensions of 1.
void appendOnes(passes::GraphEditor& edit, NodeId id, int64_t ones)
{
    Graph& g = edit.graph();
    const ValueId b = g.node(id).inputs[1];
    std::vector<Dim> dims = g.value(b).type.shape->dims;
    const int64_t rank = int64_t(dims.size());
    dims.resize(dims.size() + size_t(ones), Dim::known(1));
    const TensorType type{g.value(b).type.dtype, Shape(std::move(dims))};
    ValueId reshaped = kNone;
    if (g.value(b).isConstant()) {
        auto t = std::make_shared<Tensor>(*g.value(b).initializer);
        t->dims.resize(t->dims.size() + size_t(ones), 1);
        reshaped = edit.addConstant(g.value(b).name + "_broadcast", std::move(t));
    } else {
        reshaped = edit.addValue(g.value(b).name + "_broadcast", type);
        std::vector<int64_t> axes;
        for (int64_t i = 0; i < ones; ++i)
            axes.push_back(rank + i);
        Node unsqueeze;
        unsqueeze.name = g.node(id).name + "_broadcast";
        unsqueeze.opType = "Unsqueeze";  // axes as an attribute, as before opset 13
        unsqueeze.opset = g.node(id).opset;
        unsqueeze.inputs = {b};
        unsqueeze.outputs = {reshaped};
        unsqueeze.attributes.push_back(Attribute::ofInts("axes", axes));
        edit.addNode(std::move(unsqueeze));
    }
    edit.setInput(id, 1, reshaped);
}

// A value name the graph does not use yet, from `base`.
std::string freshName(std::unordered_set<std::string>& taken, const std::string& base)
{
    std::string name = base;
    for (int i = 1; !taken.insert(name).second; ++i)
        name = base + "_" + std::to_string(i);
    return name;
}

}  // namespace

void replaceDeprecatedOperators(onnx::GraphProto& graph, int64_t opset, int64_t irVersion)
{
    bool any = false;
    for (const auto& n : graph.node())
        any |= n.op_type() == "ImageScaler" && (n.domain().empty() || n.domain() == "ai.onnx");
    if (!any)
        return;
    std::unordered_set<std::string> taken;
    for (const auto& n : graph.node())
        for (const auto& v : n.output())
            taken.insert(v);
    for (const auto& v : graph.input())
        taken.insert(v.name());
    for (const auto& t : graph.initializer())
        taken.insert(t.name());
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (const auto& n : graph.node()) {
        if (n.op_type() != "ImageScaler" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() != 1 ||
            n.output_size() != 1) {
            *nodes.Add() = n;
            continue;
        }
        float scale = 1.0f;
        std::vector<float> bias;
        for (const auto& a : n.attribute()) {
            if (a.name() == "scale")
                scale = a.f();
            else if (a.name() == "bias")
                bias.assign(a.floats().begin(), a.floats().end());
        }
        if (bias.empty())
            bias = {0.0f};  // no bias: one zero for every channel
        const std::string base = n.name().empty() ? n.output(0) : n.name();
        auto* s = graph.add_initializer();
        s->set_name(freshName(taken, base + "_scale"));
        s->set_data_type(onnx::TensorProto::FLOAT);
        s->add_float_data(scale);
        auto* b = graph.add_initializer();
        b->set_name(freshName(taken, base + "_bias"));
        b->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : {int64_t(1), int64_t(bias.size()), int64_t(1), int64_t(1)})  // per channel of NCHW
            b->add_dims(d);
        for (float v : bias)
            b->add_float_data(v);
        if (irVersion < 4)  // initializers were graph inputs too, and shape inference reads them there
            for (const auto* t : {s, b}) {
                auto* in = graph.add_input();
                in->set_name(t->name());
                auto* type = in->mutable_type()->mutable_tensor_type();
                type->set_elem_type(onnx::TensorProto::FLOAT);
                type->mutable_shape();
                for (int64_t d : t->dims())
                    type->mutable_shape()->add_dim()->set_dim_value(d);
            }
        auto* mul = nodes.Add();
        mul->set_op_type("Mul");
        mul->set_name(freshName(taken, base + "_Mul"));
        mul->add_input(n.input(0));
        mul->add_input(s->name());
        mul->add_output(freshName(taken, base + "_scaled"));
        auto* add = nodes.Add();
        add->set_op_type("Add");
        add->set_name(freshName(taken, base + "_Add"));
        add->add_input(mul->output(0));
        add->add_input(b->name());
        add->add_output(n.output(0));
        if (opset < 7)  // numpy's broadcasting, which the Graph rewrite below keeps
            for (auto* node : {mul, add}) {
                auto* a = node->add_attribute();
                a->set_name("broadcast");
                a->set_type(onnx::AttributeProto::INT);
                a->set_i(1);
            }
    }
    graph.mutable_node()->Swap(&nodes);
}

void rewriteLegacyForms(Graph& g)
{
    for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id)
        for (Attribute& a : g.node(id).attributes) {
            if (a.g)
                rewriteLegacyForms(*a.g);
            for (const auto& sub : a.graphs)
                if (sub)
                    rewriteLegacyForms(*sub);
        }
    passes::GraphEditor edit(g);
    bool changed = false;
    for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
        if (g.node(id).opType == "Concat" && before(g.node(id), 4) && !g.node(id).attr("axis"))
            g.node(id).attributes.push_back(Attribute::ofInt("axis", 1));
        if (!broadcastsAsBefore7(g.node(id)))
            continue;
        const bool binary = g.node(id).opType != "PRelu";
        const auto ones = trailingOnes(g, g.node(id));
        if (!ones)
            continue;  // legacyBroadcastProblem names it
        if (*ones > 0) {
            appendOnes(edit, id, *ones);  // adds a node: references into g.nodes() move
            changed = true;
        }
        if (binary) {
            auto& attrs = g.node(id).attributes;
            attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [](const Attribute& a) { return a.name == "axis"; }),
                        attrs.end());
        }
    }
    if (changed)
        edit.commit();
}

std::string legacyBroadcastProblem(const Graph& g, const Node& n)
{
    if (!broadcastsAsBefore7(n))
        return {};
    const auto ones = trailingOnes(g, n);
    if (ones == 0)
        return {};
    if (ones)
        return "broadcasts as before opset 7, which import rewrites and which was not rewritten";
    if (n.opType == "PRelu")
        return "a slope of one value per channel (opset " + std::to_string(n.opset) +
               ") needs the rank of input 0, which shape inference did not give";
    return "broadcasting input 1 from axis " + std::to_string(n.attrInt("axis", 0)) + " (opset " +
           std::to_string(n.opset) + ") needs both inputs' ranks, and input 0's rank must be at least axis + input 1's";
}

}  // namespace ramiel
