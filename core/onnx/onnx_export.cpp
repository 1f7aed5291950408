#include "core/onnx/onnx_export.h"

#include "core/ir/fused_ops.h"
#include "core/ir/topology.h"
#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/version.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstring>
#include <cmath>
#include <unordered_set>

namespace ramiel {

namespace {

struct Exporter {
    const Model& model;
    int64_t mainOpset = 0;

    [[noreturn]] void fail(const std::string& message) const
    {
        throw Error(ErrorKind::Unsupported, model.path, "cannot write ONNX: " + message);
    }

    void tensor(const Tensor& t, const std::string& name, onnx::TensorProto& tp) const
    {
        if (t.dtype == DataType::String)
            fail("tensor '" + name + "' holds strings, which Ramiel does not keep");
        if (!t.hasData())
            fail("tensor '" + name + "' lives in external data that was not loaded");
        tp.set_name(name);
        tp.set_data_type(int32_t(t.dtype));
        for (int64_t d : t.dims)
            tp.add_dims(d);
        tp.set_raw_data(t.data);
    }

    static void type(const TensorType& t, onnx::TypeProto& tp)
    {
        auto* tt = tp.mutable_tensor_type();
        tt->set_elem_type(int32_t(t.dtype));
        if (!t.shape)
            return;
        auto* shape = tt->mutable_shape();
        for (const Dim& d : t.shape->dims) {
            auto* dim = shape->add_dim();
            if (d.isKnown())
                dim->set_dim_value(d.value);
            else if (!d.symbol.empty())
                dim->set_dim_param(d.symbol);
        }
    }

    static void valueInfo(const Value& v, onnx::ValueInfoProto& vi)
    {
        vi.set_name(v.name);
        if (v.type.dtype != DataType::Undefined)
            type(v.type, *vi.mutable_type());
    }

    void attribute(const Attribute& a, onnx::AttributeProto& ap) const
    {
        using A = onnx::AttributeProto;
        ap.set_name(a.name);
        switch (a.kind) {
        case Attribute::Kind::Float: ap.set_type(A::FLOAT); ap.set_f(a.f); break;
        case Attribute::Kind::Int: ap.set_type(A::INT); ap.set_i(a.i); break;
        case Attribute::Kind::String: ap.set_type(A::STRING); ap.set_s(a.s); break;
        case Attribute::Kind::Tensor:
            ap.set_type(A::TENSOR);
            tensor(*a.t, a.name, *ap.mutable_t());
            break;
        case Attribute::Kind::Graph:
            ap.set_type(A::GRAPH);
            graph(*a.g, *ap.mutable_g());
            break;
        case Attribute::Kind::Floats:
            ap.set_type(A::FLOATS);
            for (float f : a.floats) ap.add_floats(f);
            break;
        case Attribute::Kind::Ints:
            ap.set_type(A::INTS);
            for (int64_t i : a.ints) ap.add_ints(i);
            break;
        case Attribute::Kind::Strings:
            ap.set_type(A::STRINGS);
            for (const auto& s : a.strings) ap.add_strings(s);
            break;
        case Attribute::Kind::Tensors:
            ap.set_type(A::TENSORS);
            for (const auto& t : a.tensors) tensor(*t, a.name, *ap.add_tensors());
            break;
        case Attribute::Kind::Graphs:
            ap.set_type(A::GRAPHS);
            for (const auto& sub : a.graphs) graph(*sub, *ap.add_graphs());
            break;
        case Attribute::Kind::Undefined:
        case Attribute::Kind::Other:
            fail("attribute '" + a.name + "' has a kind Ramiel does not keep (sparse tensor or type)");
        }
    }

    // A name no value or node of the graph has yet, taken.
    static std::string uniqueName(std::unordered_set<std::string>& names, const std::string& base)
    {
        std::string name = base;
        for (int i = 1; names.count(name); ++i)
            name = base + "_" + std::to_string(i);
        names.insert(name);
        return name;
    }

    // A float scalar initializer named `name`.
    static void floatScalar(onnx::GraphProto& gp, const std::string& name, float f)
    {
        auto* t = gp.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->set_raw_data(std::string(reinterpret_cast<const char*>(&f), sizeof f));
    }

    // An ints attribute `name` on `node`.
    static void intsAttribute(onnx::NodeProto* node, const char* name, const std::vector<int64_t>& values)
    {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : values)
            a->add_ints(v);
    }

    // A float initializer of rank 1 named `name`.
    static void floats(onnx::GraphProto& gp, const std::string& name, const std::vector<float>& values)
    {
        auto* t = gp.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(int64_t(values.size()));
        t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    }

    // An int64 initializer of rank 1 named `name`.
    static void int64s(onnx::GraphProto& gp, const std::string& name, const std::vector<int64_t>& values)
    {
        auto* t = gp.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(int64_t(values.size()));
        t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
    }

    // ai.ramiel.ChannelShuffle -> Concat along channels (more than one input),
    // Reshape [0, group, C/group, -1], Transpose [0, 2, 1, 3], Reshape to the
    // concatenation's Shape, and a Slice along channels per output (more than one).
    void unfuseChannelShuffle(const Graph& g, const Node& n, onnx::GraphProto& gp,
                              std::unordered_set<std::string>& names) const
    {
        if (mainOpset < 5)
            fail("node '" + n.name + "' (ChannelShuffle) needs Reshape's shape input, from opset 5; the model has " +
                 std::to_string(mainOpset));
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        auto next = [&](const char* op, const std::vector<std::string>& inputs, const std::string& output) {
            return step(gp, op, unique(n.name + "_" + op), inputs, output);
        };
        const int64_t group = n.attrInt("group", 1);
        const std::vector<int64_t> split = n.attrInts("split");
        int64_t channels = 0;
        for (int64_t c : split)
            channels += c;
        const std::string base = g.value(n.outputs.at(0)).name;
        std::string x = g.value(n.inputs.at(0)).name;
        if (n.inputs.size() > 1) {
            std::vector<std::string> parts;
            for (ValueId v : n.inputs)
                parts.push_back(g.value(v).name);
            x = unique(base + "_concat");
            auto* cat = next("Concat", parts, x);
            auto* axis = cat->add_attribute();
            axis->set_name("axis");
            axis->set_type(onnx::AttributeProto::INT);
            axis->set_i(1);
        }
        const std::string groupedShape = unique(n.name + "_grouped_shape");
        int64s(gp, groupedShape, {0, group, channels / group, -1});
        const std::string grouped = unique(base + "_grouped"), transposed = unique(base + "_transposed"),
                          shape = unique(base + "_shape");
        next("Reshape", {x, groupedShape}, grouped);
        intsAttribute(next("Transpose", {grouped}, transposed), "perm", {0, 2, 1, 3});
        next("Shape", {x}, shape);
        if (n.outputs.size() == 1) {
            next("Reshape", {transposed, shape}, base)->set_name(n.name);
            return;
        }
        const std::string shuffled = unique(base + "_shuffled");
        next("Reshape", {transposed, shape}, shuffled)->set_name(n.name);
        int64_t at = 0;
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            const std::string out = g.value(n.outputs[k]).name;
            const int64_t count = k < split.size() ? split[k] : 0;
            if (mainOpset < 10) {
                auto* slice = next("Slice", {shuffled}, out);
                intsAttribute(slice, "starts", {at});
                intsAttribute(slice, "ends", {at + count});
                intsAttribute(slice, "axes", {1});
            } else {
                const std::string starts = unique(out + "_starts"), ends = unique(out + "_ends"),
                                  axes = unique(out + "_axes");
                int64s(gp, starts, {at});
                int64s(gp, ends, {at + count});
                int64s(gp, axes, {1});
                next("Slice", {shuffled, starts, ends, axes}, out);
            }
            at += count;
        }
    }

    // Appends an `op` node named `name` that reads `inputs` and writes `output`: one
    // step of an unfused node written back.
    static onnx::NodeProto* step(onnx::GraphProto& gp, const char* op, const std::string& name,
                                 const std::vector<std::string>& inputs, const std::string& output)
    {
        auto* s = gp.add_node();
        s->set_op_type(op);
        s->set_name(name);
        for (const std::string& in : inputs)
            s->add_input(in);
        s->add_output(output);
        return s;
    }

    // ai.ramiel.Gelu -> Div by √2, Erf, Add 1, Mul by x, Mul by 0.5 (ONNX before opset 20).
    void unfuseGelu(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        writeGelu(gp, names, g.value(n.inputs.at(0)).name, g.value(n.outputs.at(0)).name, n.name);
    }

    // y = GELU(x) written out (Div, Erf, Add, Mul, Mul), the nodes named after `base`.
    static void writeGelu(onnx::GraphProto& gp, std::unordered_set<std::string>& names, const std::string& x,
                          const std::string& y, const std::string& base)
    {
        auto constant = [&](const char* suffix, float f) {
            const std::string name = uniqueName(names, base + suffix);
            floatScalar(gp, name, f);
            return name;
        };
        auto next = [&](const char* op, const std::vector<std::string>& inputs, const std::string& output) {
            step(gp, op, uniqueName(names, base + "_" + op), inputs, output);
        };
        const std::string scaled = uniqueName(names, y + "_scaled"), erf = uniqueName(names, y + "_erf"),
                          plusOne = uniqueName(names, y + "_plus_one"), timesX = uniqueName(names, y + "_times_x");
        next("Div", {x, constant("_sqrt2", float(std::sqrt(2.0)))}, scaled);
        next("Erf", {scaled}, erf);
        next("Add", {erf, constant("_one", 1.0f)}, plusOne);
        next("Mul", {x, plusOne}, timesX);
        next("Mul", {timesX, constant("_half", 0.5f)}, y);
    }

    // y = Mul(x, Gate(x)), the Mul named `name`: SiLU (gate Sigmoid) or HardSwish (gate
    // HardSigmoid with alpha 1/6 and beta 1/2, as PyTorch writes it before opset 14).
    static void writeSelfGated(onnx::GraphProto& gp, std::unordered_set<std::string>& names, bool hardSwish,
                               const std::string& x, const std::string& y, const std::string& name)
    {
        const char* op = hardSwish ? "HardSigmoid" : "Sigmoid";
        const std::string gate = uniqueName(names, y + (hardSwish ? "_hardsigmoid" : "_sigmoid"));
        auto* s = step(gp, op, uniqueName(names, name + "_" + op), {x}, gate);
        if (hardSwish)
            for (const auto& [attribute, value] : {std::pair<const char*, float>{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}) {
                auto* a = s->add_attribute();
                a->set_name(attribute);
                a->set_type(onnx::AttributeProto::FLOAT);
                a->set_f(value);
            }
        step(gp, "Mul", name, {x, gate}, y);
    }

    // ai.ramiel.Silu -> Sigmoid, Mul by x; ai.ramiel.HardSwish -> HardSigmoid, Mul by x.
    void unfuseSelfGated(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        writeSelfGated(gp, names, n.opType == kHardSwish, g.value(n.inputs.at(0)).name, g.value(n.outputs.at(0)).name,
                       n.name);
    }

    // ai.ramiel.LayerNormalization -> ONNX's LayerNormalization from opset 17; before it,
    // ReduceMean, Sub, Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul by Scale (, Add B),
    // as PyTorch writes it.
    void unfuseLayerNorm(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        const std::string x = g.value(n.inputs.at(0)).name, scale = g.value(n.inputs.at(1)).name,
                          y = g.value(n.outputs.at(0)).name;
        const bool bias = n.inputs.size() > 2 && n.inputs[2] != kNone;
        if (mainOpset >= 17) {
            std::vector<std::string> inputs{x, scale};
            if (bias)
                inputs.push_back(g.value(n.inputs[2]).name);
            auto* ln = step(gp, "LayerNormalization", n.name, inputs, y);
            for (const Attribute& a : n.attributes)
                attribute(a, *ln->add_attribute());
            return;
        }
        const int64_t axis = n.attrInt("axis", -1);
        std::vector<int64_t> axes;
        for (int64_t a = axis; a < 0; ++a)
            axes.push_back(a);
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        auto next = [&](const char* op, const std::vector<std::string>& inputs, const std::string& output) {
            return step(gp, op, unique(n.name + "_" + op), inputs, output);
        };
        auto mean = [&](const std::string& in, const std::string& out) {
            intsAttribute(next("ReduceMean", {in}, out), "axes", axes);
        };
        const std::string two = unique(n.name + "_two"), eps = unique(n.name + "_epsilon");
        floatScalar(gp, two, 2.0f);
        floatScalar(gp, eps, n.attrFloat("epsilon", 1e-5f));
        const std::string m = unique(y + "_mean"), d = unique(y + "_centered"), sq = unique(y + "_squared"),
                          var = unique(y + "_variance"), ve = unique(y + "_variance_eps"), sd = unique(y + "_deviation"),
                          normed = unique(y + "_normalized"), scaled = bias ? unique(y + "_scaled") : y;
        mean(x, m);
        next("Sub", {x, m}, d);
        next("Pow", {d, two}, sq);
        mean(sq, var);
        next("Add", {var, eps}, ve);
        next("Sqrt", {ve}, sd);
        next("Div", {d, sd}, normed);
        next("Mul", {normed, scale}, scaled);
        if (bias)
            next("Add", {scaled, g.value(n.inputs[2]).name}, y);
    }

    // The value_info of a value an unfused node writes in between, typed as the node's output.
    static void intermediate(onnx::GraphProto& gp, const std::string& name, const TensorType& t)
    {
        auto* info = gp.add_value_info();
        info->set_name(name);
        if (t.dtype != DataType::Undefined)
            type(t, *info->mutable_type());
    }

    // ai.ramiel.MatMulAdd -> MatMul, Add of the bias (, its GELU written out).
    void unfuseMatMulAdd(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        const Value& y = g.value(n.outputs.at(0));
        const bool gelu = n.attrString("activation", "") == kGelu;
        const std::string sum = gelu ? uniqueName(names, y.name + "_sum") : y.name;
        const std::string product = uniqueName(names, y.name + "_product");
        step(gp, "MatMul", n.name, {g.value(n.inputs.at(0)).name, g.value(n.inputs.at(1)).name}, product);
        intermediate(gp, product, y.type);
        step(gp, "Add", uniqueName(names, n.name + "_Add"), {product, g.value(n.inputs.at(2)).name}, sum);
        if (!gelu)
            return;
        intermediate(gp, sum, y.type);
        writeGelu(gp, names, sum, y.name, n.name + "_Gelu");
    }

    // ai.ramiel.FusedConv -> Conv (+ Add of its summand) + its activation (a SiLU as Sigmoid, Mul).
    void unfuseConv(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        const std::string activation = n.attrString("activation", "");
        const Value& y = g.value(n.outputs.at(0));
        const std::string pre = unique(y.name + "_preact");

        auto* conv = gp.add_node();
        conv->set_op_type("Conv");
        conv->set_name(n.name);
        const size_t convInputs = n.inputs.size() > 2 && n.inputs[2] == kNone ? 2 : std::min<size_t>(n.inputs.size(), 3);
        for (size_t i = 0; i < convInputs; ++i)
            conv->add_input(n.inputs[i] == kNone ? std::string() : g.value(n.inputs[i]).name);
        conv->add_output(pre);
        for (const Attribute& a : n.attributes)
            if (a.name != "activation" && a.name != "activation_params")
                attribute(a, *conv->add_attribute());
        intermediate(gp, pre, y.type);
        std::string activationInput = pre;
        if (n.inputs.size() > 3 && n.inputs[3] != kNone) {
            activationInput = activation.empty() ? y.name : unique(y.name + "_sum");
            auto* add = gp.add_node();
            add->set_op_type("Add");
            add->set_name(unique(n.name + "_Add"));
            add->add_input(pre);
            add->add_input(g.value(n.inputs[3]).name);
            add->add_output(activationInput);
            if (activation.empty())
                return;  // the sum is the output
            intermediate(gp, activationInput, y.type);
        }

        writeActivation(gp, names, n, activationInput, y.name);
    }

    // A fused node's activation (its `activation`, `activation_params`) from x into y;
    // Ramiel's own Silu, and HardSwish where the opset predates it, as the gate, then Mul by its input.
    void writeActivation(onnx::GraphProto& gp, std::unordered_set<std::string>& names, const Node& n,
                         const std::string& x, const std::string& y) const
    {
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        const std::string activation = n.attrString("activation", "");
        const Attribute* paramsAttr = n.attr("activation_params");
        const std::vector<float> params = paramsAttr ? paramsAttr->floats : std::vector<float>{};
        if (activation == "Silu" || (activation == "HardSwish" && mainOpset < 14)) {
            writeSelfGated(gp, names, activation == "HardSwish", x, y, unique(n.name + "_Mul"));
            return;
        }
        auto* act = gp.add_node();
        act->set_op_type(activation);
        act->set_name(unique(n.name + "_" + activation));
        act->add_input(x);
        act->add_output(y);
        if (activation == "LeakyRelu" && params.size() == 1) {
            auto* a = act->add_attribute();
            a->set_name("alpha");
            a->set_type(onnx::AttributeProto::FLOAT);
            a->set_f(params[0]);
        } else if (activation == "Clip" && params.size() == 2) {
            if (mainOpset < 11) {
                for (int i = 0; i < 2; ++i) {
                    auto* a = act->add_attribute();
                    a->set_name(i == 0 ? "min" : "max");
                    a->set_type(onnx::AttributeProto::FLOAT);
                    a->set_f(params[size_t(i)]);
                }
            } else {
                for (int i = 0; i < 2; ++i) {
                    const std::string bound = unique(n.name + (i == 0 ? "_min" : "_max"));
                    floatScalar(gp, bound, params[size_t(i)]);
                    act->add_input(bound);
                }
            }
        } else if (activation != "Relu" && activation != "Sigmoid" && activation != "HardSwish") {
            fail("node '" + n.name + "' fuses an unknown activation '" + activation + "'");
        }
    }

    // ai.ramiel.FusedBatchNorm -> Concat along channels (more than one part),
    // BatchNormalization, its activation.
    void unfuseBatchNorm(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        const Value& y = g.value(n.outputs.at(0));
        const size_t parts = n.inputs.size() - 4;
        std::string x = g.value(n.inputs.at(0)).name;
        if (parts > 1) {
            std::vector<std::string> partNames;
            for (size_t i = 0; i < parts; ++i)
                partNames.push_back(g.value(n.inputs[i]).name);
            x = unique(y.name + "_concat");
            auto* axis = step(gp, "Concat", unique(n.name + "_Concat"), partNames, x)->add_attribute();
            axis->set_name("axis");
            axis->set_type(onnx::AttributeProto::INT);
            axis->set_i(1);
            intermediate(gp, x, y.type);  // BatchNormalization and the activation keep the shape
        }
        const bool activation = n.attr("activation") != nullptr;
        const std::string normalized = activation ? unique(y.name + "_preact") : y.name;
        std::vector<std::string> inputs{x};
        for (size_t i = parts; i < n.inputs.size(); ++i)
            inputs.push_back(g.value(n.inputs[i]).name);
        auto* eps = step(gp, "BatchNormalization", n.name, inputs, normalized)->add_attribute();
        eps->set_name("epsilon");
        eps->set_type(onnx::AttributeProto::FLOAT);
        eps->set_f(n.attrFloat("epsilon", 1e-5f));
        if (!activation)
            return;
        intermediate(gp, normalized, y.type);
        writeActivation(gp, names, n, normalized, y.name);
    }

    // ai.ramiel.FusedGroupNorm -> what PyTorch exports for F.group_norm: Reshape to
    // [0, G, -1], InstanceNormalization (scale 1, bias 0), Reshape to Shape(X), Mul by the
    // scale and Add of the bias, each made [C, 1, ..., 1]; then the activation.
    void unfuseGroupNorm(const Graph& g, const Node& n, onnx::GraphProto& gp, std::unordered_set<std::string>& names) const
    {
        if (mainOpset < 7)
            fail("node '" + n.name + "' (FusedGroupNorm) needs Reshape's shape input and broadcasting Mul, from opset 7; "
                 "the model has " + std::to_string(mainOpset));
        const Value& x = g.value(n.inputs.at(0));
        if (!x.type.shape || x.type.shape->rank() < 2)
            fail("node '" + n.name + "' (FusedGroupNorm) has an input of unknown rank, which its ONNX form needs");
        auto unique = [&](const std::string& base) { return uniqueName(names, base); };
        auto next = [&](const char* op, const std::vector<std::string>& inputs, const std::string& output) {
            return step(gp, op, unique(n.name + "_" + op), inputs, output);
        };
        const Value& y = g.value(n.outputs.at(0));
        const int64_t groups = n.attrInt("num_groups", 1);
        const std::string groupedShape = unique(n.name + "_grouped_shape"), ones = unique(n.name + "_ones"),
                          zeros = unique(n.name + "_zeros"), grouped = unique(y.name + "_grouped"),
                          normalized = unique(y.name + "_normalized"), shape = unique(y.name + "_shape"),
                          restored = unique(y.name + "_restored"), channelShape = unique(n.name + "_channel_shape"),
                          scale = unique(n.name + "_scale"), bias = unique(n.name + "_bias"),
                          scaled = unique(y.name + "_scaled");
        const bool activation = n.attr("activation") != nullptr;
        const std::string shifted = activation ? unique(y.name + "_preact") : y.name;
        int64s(gp, groupedShape, {0, groups, -1});
        floats(gp, ones, std::vector<float>(size_t(groups), 1.0f));
        floats(gp, zeros, std::vector<float>(size_t(groups), 0.0f));
        std::vector<int64_t> perChannel(x.type.shape->rank() - 1, 1);
        perChannel[0] = -1;
        int64s(gp, channelShape, perChannel);
        next("Reshape", {x.name, groupedShape}, grouped);
        auto* eps = step(gp, "InstanceNormalization", n.name, {grouped, ones, zeros}, normalized)->add_attribute();
        eps->set_name("epsilon");
        eps->set_type(onnx::AttributeProto::FLOAT);
        eps->set_f(n.attrFloat("epsilon", 1e-5f));
        next("Shape", {x.name}, shape);
        next("Reshape", {normalized, shape}, restored);
        next("Reshape", {g.value(n.inputs.at(1)).name, channelShape}, scale);
        next("Reshape", {g.value(n.inputs.at(2)).name, channelShape}, bias);
        next("Mul", {restored, scale}, scaled);
        next("Add", {scaled, bias}, shifted);
        for (const std::string& v : {restored, scaled})
            intermediate(gp, v, y.type);
        if (!activation)
            return;
        intermediate(gp, shifted, y.type);
        writeActivation(gp, names, n, shifted, y.name);
    }

    void graph(const Graph& g, onnx::GraphProto& gp) const
    {
        gp.set_name(g.name);
        std::unordered_set<std::string> names;
        for (const Value& v : g.values())
            names.insert(v.name);
        for (const Node& n : g.nodes())
            names.insert(n.name);

        for (const Value& v : g.values())
            if (v.isConstant())
                tensor(*v.initializer, v.name, *gp.add_initializer());
        for (ValueId v : g.inputs())
            valueInfo(g.value(v), *gp.add_input());
        for (ValueId v : g.outputs())
            valueInfo(g.value(v), *gp.add_output());
        for (const Value& v : g.values())
            if (!v.isConstant() && !v.isGraphInput && !v.isGraphOutput && !v.isOuterScope &&
                v.type.dtype != DataType::Undefined && (v.producer != kNone || !v.consumers.empty()))
                valueInfo(v, *gp.add_value_info());

        for (NodeId id : buildTopology(g).order) {
            const Node& n = g.node(id);
            if (n.domain == kRamielDomain && n.opType == kFusedConv) {
                unfuseConv(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kGelu) {
                unfuseGelu(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && (n.opType == kSilu || n.opType == kHardSwish)) {
                unfuseSelfGated(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kMatMulAdd) {
                unfuseMatMulAdd(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kLayerNorm) {
                unfuseLayerNorm(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kChannelShuffle) {
                unfuseChannelShuffle(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kFusedBatchNorm) {
                unfuseBatchNorm(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain && n.opType == kFusedGroupNorm) {
                unfuseGroupNorm(g, n, gp, names);
                continue;
            }
            if (n.domain == kRamielDomain)
                fail("node '" + n.name + "' is Ramiel's own operator " + n.opType + ", which has no ONNX form");
            auto* np = gp.add_node();
            np->set_op_type(n.opType);
            np->set_name(n.name);
            if (!n.domain.empty())
                np->set_domain(n.domain);
            for (ValueId v : n.inputs)
                np->add_input(v == kNone ? std::string() : g.value(v).name);
            for (ValueId v : n.outputs)
                np->add_output(v == kNone ? std::string() : g.value(v).name);
            for (const Attribute& a : n.attributes)
                attribute(a, *np->add_attribute());
        }
    }
};

}  // namespace

std::string exportOnnx(const Model& model)
{
    Exporter ex{model, model.opsetVersion("")};
    onnx::ModelProto proto;
    proto.set_ir_version(model.irVersion > 0 ? model.irVersion : 8);
    proto.set_producer_name("ramiel");
    proto.set_producer_version(kVersion);
    for (const OpsetImport& o : model.opsets) {
        if (o.domain == kRamielDomain)
            continue;  // its operators are written as standard ones
        auto* op = proto.add_opset_import();
        op->set_domain(o.domain);
        op->set_version(o.version);
    }
    ex.graph(model.graph, *proto.mutable_graph());
    const size_t bytes = proto.ByteSizeLong();
    if (bytes > size_t(INT_MAX))
        ex.fail("the model would take " + std::to_string(bytes >> 20) +
                " MiB, more than protobuf's 2 GiB limit (external data is not written yet)");
    return proto.SerializeAsString();
}

void saveOnnx(const Model& model, const std::string& path) { writeFileAtomically(path, exportOnnx(model)); }

}  // namespace ramiel
