#include "core/analysis/finite_values.h"

#include "core/ir/fused_ops.h"

#include <cmath>
#include <set>
#include <string>

namespace ramiel {

namespace {

// Operators whose outputs are finite wherever their inputs are (float overflow aside):
// piecewise-linear, bounded and saturating functions, pooling, data movement, sums,
// products and comparisons. Ramiel's fused operators are its own domain's.
const std::set<std::string>& finiteOperators()
{
    static const std::set<std::string> ops{
        // Convolutions, products and sums
        "Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Sub", "Mul", "Sum", "Mean", "Max", "Min",
        "BatchNormalization", "Neg", "Abs",
        // Activations
        "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu",
        "Softplus", "Erf", "Gelu", "Softmax", "LogSoftmax", "Floor", "Ceil", "Round", "Sign",
        // Pooling and reductions that neither divide by a value nor take logarithms
        "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceMax", "ReduceMin",
        "ReduceSum", "ArgMax", "ArgMin",
        // Data movement and shapes
        "Concat", "Split", "Slice", "Gather", "GatherElements", "Reshape", "Flatten", "Transpose", "Squeeze",
        "Unsqueeze", "Identity", "Dropout", "Expand", "Tile", "Shape", "Size", "Cast", "CastLike", "Pad",
        "Resize", "Upsample", "DepthToSpace", "SpaceToDepth", "Where",
        // Comparisons and logic (no float results)
        "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And", "Or", "Xor",
        // Ramiel's fused operators (core/ir/fused_ops.h)
        std::string(kRamielDomain) + "." + kFusedConv, std::string(kRamielDomain) + "." + kFusedBatchNorm,
        std::string(kRamielDomain) + "." + kMatMulAdd, std::string(kRamielDomain) + "." + kChannelShuffle,
        std::string(kRamielDomain) + "." + kHardSwish, std::string(kRamielDomain) + "." + kSilu,
        std::string(kRamielDomain) + "." + kGelu,
    };
    return ops;
}

bool finite(const Tensor& t)
{
    switch (t.dtype) {
    case DataType::Float:
    case DataType::Double: break;
    case DataType::Float16:
    case DataType::BFloat16:
    case DataType::Complex64:
    case DataType::Complex128: return false;  // not looked into
    default: return true;                     // integers and booleans
    }
    if (!t.hasData())
        return false;  // external data not loaded: not known
    for (int64_t i = 0; i < t.numel(); ++i)
        if (!std::isfinite(t.dtype == DataType::Float ? double(t.at<float>(i)) : t.at<double>(i)))
            return false;
    return true;
}

bool finiteAttributes(const Node& n)
{
    for (const Attribute& a : n.attributes) {
        if ((a.kind == Attribute::Kind::Float && !std::isfinite(a.f)) || (a.t && !finite(*a.t)))
            return false;
        for (float f : a.floats)
            if (!std::isfinite(f))
                return false;
        for (const auto& t : a.tensors)
            if (t && !finite(*t))
                return false;
    }
    return true;
}

}  // namespace

bool keepsValuesFinite(const Graph& g)
{
    for (const Node& n : g.nodes()) {
        const std::string op = n.domain.empty() || n.domain == "ai.onnx" ? n.opType : n.domain + "." + n.opType;
        if (n.hasSubgraphs() || !finiteOperators().count(op) || !finiteAttributes(n))
            return false;
    }
    for (const Value& v : g.values())
        if (v.isConstant() && v.initializer && !finite(*v.initializer))
            return false;
    return true;
}

}  // namespace ramiel
