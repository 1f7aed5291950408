// Builds small ONNX models in memory with the onnx protobuf API, for tests
// that need exact shapes and attributes.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace ramiel::test {

class OnnxBuilder {
public:
    explicit OnnxBuilder(int opset = 13);

    // dims: -1 leaves a dimension unknown; a non-empty `symbol` names it.
    OnnxBuilder& input(const std::string& name, std::vector<int64_t> dims,
                       onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT,
                       const std::vector<std::string>& symbols = {});
    // Without dims the output's shape is left out (ONNX's checker then warns);
    // -1 declares a dimension of unknown size.
    OnnxBuilder& output(const std::string& name, std::vector<int64_t> dims = {},
                        onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT);
    // The type and shape of an intermediate value (where ONNX's shape inference cannot
    // give them: Ramiel's own operators), as output() declares an output's.
    OnnxBuilder& valueInfo(const std::string& name, std::vector<int64_t> dims,
                           onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT);
    OnnxBuilder& initializer(const std::string& name, std::vector<int64_t> dims, float fill = 0.5f);
    // Element i (in row-major order) is value(i).
    OnnxBuilder& initializer(const std::string& name, std::vector<int64_t> dims,
                             const std::function<float(int64_t)>& value);
    OnnxBuilder& initializerInt64(const std::string& name, const std::vector<int64_t>& values);
    // With the given dims (none: a scalar); their product must be values.size().
    OnnxBuilder& initializerInt64(const std::string& name, const std::vector<int64_t>& values,
                                  const std::vector<int64_t>& dims);
    // An int8, uint8, int16 or int32 tensor (ONNX keeps them in int32_data) of the given dims.
    OnnxBuilder& initializerInts(const std::string& name, onnx::TensorProto::DataType type, const std::vector<int64_t>& values,
                                 const std::vector<int64_t>& dims);
    onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> inputs,
                          std::initializer_list<std::string> outputs, const std::string& name = {});

    onnx::ModelProto& model() { return model_; }
    std::string bytes() const;

    static void setInts(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values);
    static void setInt(onnx::NodeProto& n, const std::string& name, int64_t value);
    static void setFloat(onnx::NodeProto& n, const std::string& name, float value);
    static void setFloats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& values);
    static void setString(onnx::NodeProto& n, const std::string& name, const std::string& value);
    static void setStrings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& values);
    // A float tensor attribute (a Constant's or a ConstantOfShape's value) of the given dims.
    static void setFloatTensor(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values);
    // A graph attribute (an If branch, a Loop or Scan body): `body`'s graph, named `name`.
    static void setGraph(onnx::NodeProto& n, const std::string& name, const OnnxBuilder& body);

private:
    onnx::ModelProto model_;
};

// `input` [batch, 3, 16, 16], its batch symbolic as most exports declare it, through a
// 3x3 convolution (4 filters, pads 1) and a Relu into y [batch, 4, 16, 16].
OnnxBuilder symbolicBatchConvModel(const std::string& input = "x");
// x [1, 8] (its width symbolic where `sizedInput` is false) into y, the float positions of
// its elements above 0.25 (Greater, NonZero, Cast: sizes that depend on the data), and z, its
// Relu.
OnnxBuilder dataDependentSizesModel(bool sizedInput = true);
// Writes the model's bytes to `path`; false where the file cannot be written.
bool writeModel(const OnnxBuilder& b, const std::string& path);

}  // namespace ramiel::test
