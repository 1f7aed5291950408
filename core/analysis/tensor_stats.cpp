#include "core/analysis/tensor_stats.h"

#include "core/ir/data_type.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace ramiel {
namespace {

float fromHalf(uint16_t h)
{
    const bool negative = (h & 0x8000) != 0;
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    float f;
    if (exponent == 0)
        f = std::ldexp(float(mantissa), -24);  // zero and subnormals
    else if (exponent == 0x1f)
        f = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else
        f = std::ldexp(float(mantissa | 0x400), exponent - 25);
    return negative ? -f : f;
}

float fromBFloat16(uint16_t h)
{
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Element i as a double, for the numeric element types; empty for the others.
std::function<double(int64_t)> reader(const Tensor& t)
{
    switch (t.dtype) {
    case DataType::Float: return [&t](int64_t i) { return double(t.at<float>(i)); };
    case DataType::Double: return [&t](int64_t i) { return t.at<double>(i); };
    case DataType::Float16: return [&t](int64_t i) { return double(fromHalf(t.at<uint16_t>(i))); };
    case DataType::BFloat16: return [&t](int64_t i) { return double(fromBFloat16(t.at<uint16_t>(i))); };
    case DataType::Int8: return [&t](int64_t i) { return double(t.at<int8_t>(i)); };
    case DataType::UInt8: return [&t](int64_t i) { return double(t.at<uint8_t>(i)); };
    case DataType::Int16: return [&t](int64_t i) { return double(t.at<int16_t>(i)); };
    case DataType::UInt16: return [&t](int64_t i) { return double(t.at<uint16_t>(i)); };
    case DataType::Int32: return [&t](int64_t i) { return double(t.at<int32_t>(i)); };
    case DataType::UInt32: return [&t](int64_t i) { return double(t.at<uint32_t>(i)); };
    case DataType::Int64: return [&t](int64_t i) { return double(t.at<int64_t>(i)); };
    case DataType::UInt64: return [&t](int64_t i) { return double(t.at<uint64_t>(i)); };
    case DataType::Bool: return [&t](int64_t i) { return t.at<uint8_t>(i) ? 1.0 : 0.0; };
    default: return {};
    }
}

}  // namespace

std::optional<TensorStats> tensorStats(const Tensor& tensor, int bins)
{
    const int64_t n = tensor.numel();
    const int64_t size = elementSize(tensor.dtype);
    const auto read = reader(tensor);
    if (!read || n < 0 || size <= 0 || int64_t(tensor.data.size()) != n * size)
        return std::nullopt;
    TensorStats s;
    s.count = n;
    // Welford's running mean and variance: one pass, no cancellation.
    double mean = 0, m2 = 0;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        const double v = read(i);
        if (std::isnan(v)) {
            ++s.nans;
            continue;
        }
        if (std::isinf(v)) {
            ++s.infinities;
            continue;
        }
        s.zeros += v == 0;
        ++s.finite;
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        const double delta = v - mean;
        mean += delta / double(s.finite);
        m2 += delta * (v - mean);
    }
    if (s.finite == 0) {
        s.min = s.max = 0;
        return s;
    }
    s.mean = mean;
    s.stddev = std::sqrt(m2 / double(s.finite));
    const int count = s.max > s.min ? std::max(1, bins) : 1;
    s.histogram.assign(size_t(count), 0);
    const double width = (s.max - s.min) / count;
    for (int64_t i = 0; i < n; ++i) {
        const double v = read(i);
        if (!std::isfinite(v))
            continue;
        const int bin = width > 0 ? std::min(count - 1, int((v - s.min) / width)) : 0;
        ++s.histogram[size_t(bin)];
    }
    return s;
}

}  // namespace ramiel
