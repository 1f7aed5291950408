#include "onnx_builder.h"

#include <fstream>

namespace ramiel::test {

OnnxBuilder::OnnxBuilder(int opset)
{
    model_.set_ir_version(8);
    model_.set_producer_name("ramiel-tests");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
}

OnnxBuilder& OnnxBuilder::input(const std::string& name, std::vector<int64_t> dims,
                                onnx::TensorProto::DataType type, const std::vector<std::string>& symbols)
{
    auto* vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
        auto* d = shape->add_dim();
        if (i < symbols.size() && !symbols[i].empty())
            d->set_dim_param(symbols[i]);
        else if (dims[i] >= 0)
            d->set_dim_value(dims[i]);
    }
    return *this;
}

namespace {

void declare(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims,
             onnx::TensorProto::DataType type)
{
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    if (!dims.empty())
        for (int64_t d : dims) {
            auto* dim = tt->mutable_shape()->add_dim();
            if (d >= 0)
                dim->set_dim_value(d);
        }
}

}  // namespace

OnnxBuilder& OnnxBuilder::output(const std::string& name, std::vector<int64_t> dims, onnx::TensorProto::DataType type)
{
    declare(model_.mutable_graph()->add_output(), name, dims, type);
    return *this;
}

OnnxBuilder& OnnxBuilder::valueInfo(const std::string& name, std::vector<int64_t> dims, onnx::TensorProto::DataType type)
{
    declare(model_.mutable_graph()->add_value_info(), name, dims, type);
    return *this;
}

OnnxBuilder& OnnxBuilder::initializer(const std::string& name, std::vector<int64_t> dims, float fill)
{
    return initializer(name, std::move(dims), [fill](int64_t) { return fill; });
}

OnnxBuilder& OnnxBuilder::initializer(const std::string& name, std::vector<int64_t> dims,
                                      const std::function<float(int64_t)>& value)
{
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
        t->add_dims(d);
        n *= d;
    }
    for (int64_t i = 0; i < n; ++i)
        t->add_float_data(value(i));
    return *this;
}

OnnxBuilder& OnnxBuilder::initializerInt64(const std::string& name, const std::vector<int64_t>& values)
{
    return initializerInt64(name, values, {static_cast<int64_t>(values.size())});
}

OnnxBuilder& OnnxBuilder::initializerInt64(const std::string& name, const std::vector<int64_t>& values,
                                           const std::vector<int64_t>& dims)
{
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims)
        t->add_dims(d);
    for (int64_t v : values)
        t->add_int64_data(v);
    return *this;
}

OnnxBuilder& OnnxBuilder::initializerInts(const std::string& name, onnx::TensorProto::DataType type,
                                          const std::vector<int64_t>& values, const std::vector<int64_t>& dims)
{
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims)
        t->add_dims(d);
    for (int64_t v : values)
        t->add_int32_data(int32_t(v));
    return *this;
}

onnx::NodeProto& OnnxBuilder::node(const std::string& op, std::initializer_list<std::string> inputs,
                                   std::initializer_list<std::string> outputs, const std::string& name)
{
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op : name);
    for (const auto& i : inputs)
        n->add_input(i);
    for (const auto& o : outputs)
        n->add_output(o);
    return *n;
}

std::string OnnxBuilder::bytes() const { return model_.SerializeAsString(); }

void OnnxBuilder::setInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
        a->add_ints(v);
}

void OnnxBuilder::setInt(onnx::NodeProto& n, const std::string& name, int64_t value)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

OnnxBuilder symbolicBatchConvModel(const std::string& input)
{
    OnnxBuilder b;
    b.input(input, {-1, 3, 16, 16}, onnx::TensorProto::FLOAT, {"batch", "", "", ""})
        .initializer("w", {4, 3, 3, 3})
        .output("y", {-1, 4, 16, 16});
    OnnxBuilder::setInts(b.node("Conv", {input, "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"y"}, "relu");
    return b;
}

OnnxBuilder dataDependentSizesModel(bool sizedInput)
{
    OnnxBuilder b;
    if (sizedInput)
        b.input("x", {1, 8});
    else
        b.input("x", {1, -1}, onnx::TensorProto::FLOAT, {"", "width"});
    b.initializer("threshold", {1}, 0.25f).output("y").output("z");
    b.node("Greater", {"x", "threshold"}, {"above"}, "greater");
    b.node("NonZero", {"above"}, {"where"}, "nonzero");
    OnnxBuilder::setInt(b.node("Cast", {"where"}, {"y"}, "cast"), "to", onnx::TensorProto::FLOAT);
    b.node("Relu", {"x"}, {"z"}, "relu");
    return b;
}

bool writeModel(const OnnxBuilder& b, const std::string& path)
{
    std::ofstream f(path, std::ios::binary);
    f << b.bytes();
    return bool(f.flush());
}

void OnnxBuilder::setFloat(onnx::NodeProto& n, const std::string& name, float value)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
}

void OnnxBuilder::setFloats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& values)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float v : values)
        a->add_floats(v);
}

void OnnxBuilder::setString(onnx::NodeProto& n, const std::string& name, const std::string& value)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
}

void OnnxBuilder::setStrings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& values)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& v : values)
        a->add_strings(v);
}

void OnnxBuilder::setFloatTensor(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
        a->mutable_t()->add_dims(d);
    for (float v : values)
        a->mutable_t()->add_float_data(v);
}

void OnnxBuilder::setGraph(onnx::NodeProto& n, const std::string& name, const OnnxBuilder& body)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body.model_.graph();
    a->mutable_g()->set_name(name);
}

}  // namespace ramiel::test
