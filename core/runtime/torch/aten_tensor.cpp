#include "core/runtime/torch/aten_tensor.h"

#include "core/util/error.h"

#include <cstring>

namespace ramiel {

std::optional<at::ScalarType> scalarTypeOf(DataType t)
{
    switch (t) {
    case DataType::Float: return at::kFloat;
    case DataType::Double: return at::kDouble;
    case DataType::Float16: return at::kHalf;
    case DataType::BFloat16: return at::kBFloat16;
    case DataType::Int8: return at::kChar;
    case DataType::UInt8: return at::kByte;
    case DataType::Int16: return at::kShort;
    case DataType::Int32: return at::kInt;
    case DataType::Int64: return at::kLong;
    case DataType::Bool: return at::kBool;
    case DataType::Complex64: return at::kComplexFloat;
    case DataType::Complex128: return at::kComplexDouble;
    default: return std::nullopt;
    }
}

DataType dataTypeOf(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return DataType::Float;
    case at::kDouble: return DataType::Double;
    case at::kHalf: return DataType::Float16;
    case at::kBFloat16: return DataType::BFloat16;
    case at::kChar: return DataType::Int8;
    case at::kByte: return DataType::UInt8;
    case at::kShort: return DataType::Int16;
    case at::kInt: return DataType::Int32;
    case at::kLong: return DataType::Int64;
    case at::kBool: return DataType::Bool;
    case at::kComplexFloat: return DataType::Complex64;
    case at::kComplexDouble: return DataType::Complex128;
    default: return DataType::Undefined;
    }
}

namespace {

// The element type of t as ATen's; throws where ATen has none or t has no data.
at::ScalarType checkedType(const Tensor& t, const std::string& what)
{
    const auto type = scalarTypeOf(t.dtype);
    if (!type)
        throw Error(ErrorKind::Unsupported, {}, what + " has element type " + dataTypeName(t.dtype) +
                                                    ", which the runtime does not support");
    if (!t.hasData())
        throw Error(ErrorKind::Unsupported, {}, what + " has no data (external data not loaded)");
    return *type;
}

}  // namespace

at::Tensor constantToATen(const std::shared_ptr<const Tensor>& t, const std::string& what)
{
    const at::ScalarType type = checkedType(*t, what);
    const int64_t n = t->numel();
    if (n == 0 || int64_t(t->data.size()) != n * int64_t(c10::elementSize(type)))
        return toATen(*t, what);
    auto* kept = new std::shared_ptr<const Tensor>(t);
    return at::from_blob(const_cast<char*>(t->data.data()), t->dims, [kept](void*) { delete kept; },
                         at::TensorOptions().dtype(type));
}

at::Tensor toATen(const Tensor& t, const std::string& what)
{
    at::Tensor out = at::empty(t.dims, at::TensorOptions().dtype(checkedType(t, what)));
    if (!t.data.empty())
        std::memcpy(out.data_ptr(), t.data.data(), t.data.size());
    return out;
}

Tensor fromATen(const at::Tensor& in)
{
    const at::Tensor t = in.contiguous();
    Tensor out;
    out.dtype = dataTypeOf(t.scalar_type());
    out.dims.assign(t.sizes().begin(), t.sizes().end());
    out.data.resize(t.numel() * t.element_size());
    if (!out.data.empty())
        std::memcpy(out.data.data(), t.data_ptr(), out.data.size());
    return out;
}

std::vector<int64_t> toInt64Vector(const at::Tensor& t)
{
    const at::Tensor c = t.to(at::kLong).contiguous().reshape({-1});
    const int64_t* p = c.data_ptr<int64_t>();
    return std::vector<int64_t>(p, p + c.numel());
}

}  // namespace ramiel
