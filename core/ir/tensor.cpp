#include "core/ir/tensor.h"

namespace ramiel {

Shape Shape::of(const std::vector<int64_t>& sizes)
{
    Shape s;
    s.dims.reserve(sizes.size());
    for (int64_t v : sizes)
        s.dims.push_back(v >= 0 ? Dim::known(v) : Dim::unknown());
    return s;
}

bool Shape::isFullyKnown() const
{
    for (const Dim& d : dims)
        if (!d.isKnown())
            return false;
    return true;
}

std::optional<int64_t> Shape::numel() const
{
    int64_t n = 1;
    for (const Dim& d : dims) {
        if (!d.isKnown())
            return std::nullopt;
        if (__builtin_mul_overflow(n, d.value, &n))
            return std::nullopt;
    }
    return n;
}

std::optional<std::vector<int64_t>> Shape::sizes() const
{
    std::vector<int64_t> out;
    out.reserve(dims.size());
    for (const Dim& d : dims) {
        if (!d.isKnown())
            return std::nullopt;
        out.push_back(d.value);
    }
    return out;
}

std::string Shape::toString() const
{
    if (dims.empty())
        return "scalar";
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i)
            s += 'x';
        const Dim& d = dims[i];
        s += d.isKnown() ? std::to_string(d.value) : (d.symbol.empty() ? std::string("?") : d.symbol);
    }
    return s;
}

std::optional<int64_t> TensorType::byteSize() const
{
    const int64_t es = elementSize(dtype);
    if (!shape || es == 0)
        return std::nullopt;
    auto n = shape->numel();
    int64_t bytes = 0;
    if (!n || __builtin_mul_overflow(*n, es, &bytes))
        return std::nullopt;
    return bytes;
}

std::string TensorType::toString() const
{
    return dataTypeName(dtype) + "[" + (shape ? shape->toString() : std::string("?")) + "]";
}

int64_t Tensor::numel() const
{
    int64_t n = 1;
    for (int64_t d : dims)
        if (d < 0 || __builtin_mul_overflow(n, d, &n))
            return -1;
    return n;
}

std::optional<std::vector<int64_t>> Tensor::toInt64s() const
{
    const int64_t n = numel();
    if (n < 0 || static_cast<int64_t>(data.size()) != n * elementSize(dtype))
        return std::nullopt;
    std::vector<int64_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        switch (dtype) {
        case DataType::Int64: out[i] = at<int64_t>(i); break;
        case DataType::Int32: out[i] = at<int32_t>(i); break;
        case DataType::Int16: out[i] = at<int16_t>(i); break;
        case DataType::Int8: out[i] = at<int8_t>(i); break;
        case DataType::UInt8: out[i] = at<uint8_t>(i); break;
        case DataType::UInt16: out[i] = at<uint16_t>(i); break;
        case DataType::UInt32: out[i] = at<uint32_t>(i); break;
        case DataType::Bool: out[i] = at<uint8_t>(i) != 0; break;
        default: return std::nullopt;
        }
    }
    return out;
}

std::optional<std::vector<double>> Tensor::toDoubles() const
{
    const int64_t n = numel();
    if (n < 0 || static_cast<int64_t>(data.size()) != n * elementSize(dtype))
        return std::nullopt;
    std::vector<double> out(static_cast<size_t>(n));
    if (dtype == DataType::Float || dtype == DataType::Double || dtype == DataType::UInt64) {
        for (int64_t i = 0; i < n; ++i)
            out[size_t(i)] = dtype == DataType::Float    ? double(at<float>(i))
                             : dtype == DataType::Double ? at<double>(i)
                                                         : double(at<uint64_t>(i));
        return out;
    }
    const auto ints = toInt64s();  // the other integer and bool types
    if (!ints)
        return std::nullopt;
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = double((*ints)[i]);
    return out;
}

}  // namespace ramiel
