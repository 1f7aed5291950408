#include "core/runtime/torch/kernel.h"

#include "core/runtime/torch/aten_tensor.h"
#include "core/util/error.h"

#include <algorithm>

namespace ramiel {

int64_t KernelContext::inputRank(size_t i) const
{
    const ValueId v = node.input(i);
    if (v == kNone || !graph.value(v).type.shape)
        return -1;
    return int64_t(graph.value(v).type.shape->rank());
}

void KernelContext::unsupported(const std::string& what) const
{
    throw Error(ErrorKind::Unsupported, {}, "node '" + node.name + "' (" + node.opType + "): " + what);
}

std::optional<at::ScalarType> KernelContext::elementTypeAttr(std::string_view name,
                                                            std::optional<at::ScalarType> fallback) const
{
    const Attribute* a = node.attr(name);
    if (!a)
        return fallback;
    const DataType dt = dataTypeFromOnnx(int32_t(a->i));
    const auto type = scalarTypeOf(dt);
    if (!type)
        unsupported(std::string(name) + " " + dataTypeName(dt) + " is not supported");
    return type;
}

int64_t normalizeAxis(int64_t axis, int64_t rank)
{
    if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
        throw Error(ErrorKind::Usage, {}, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> intsOf(const at::Tensor& t) { return t.defined() ? toInt64Vector(t) : std::vector<int64_t>{}; }

std::vector<int64_t> spatialSizes(const at::Tensor& x) { return std::vector<int64_t>(x.sizes().begin() + 2, x.sizes().end()); }

std::vector<int64_t> kernelFromWeight(const at::Tensor& w) { return std::vector<int64_t>(w.sizes().begin() + 2, w.sizes().end()); }

std::string shapeText(at::IntArrayRef s)
{
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

bool heldOnlyHere(const at::Tensor& t) { return t.use_count() == 1 && t.storage().use_count() == 1; }

std::vector<ValueId> distinctReads(const Node& node)
{
    std::vector<ValueId> reads;
    auto add = [&](ValueId v) {
        if (v != kNone && std::find(reads.begin(), reads.end(), v) == reads.end())
            reads.push_back(v);
    };
    for (ValueId v : node.inputs)
        add(v);
    for (ValueId v : node.implicitInputs)
        add(v);
    return reads;
}

const KernelRegistry& kernelRegistry()
{
    static const KernelRegistry registry = [] {
        KernelRegistry r;
        registerElementwiseKernels(r);
        registerConvolutionKernels(r);
        registerNeuralKernels(r);
        registerQuantizedKernels(r);
        registerShapeKernels(r);
        registerIndexingKernels(r);
        registerControlFlowKernels(r);
        registerRecurrentKernels(r);
        registerRandomKernels(r);
        registerSignalKernels(r);
        return r;
    }();
    return registry;
}

}  // namespace ramiel
