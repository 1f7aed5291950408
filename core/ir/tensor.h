// Shapes (with symbolic dimensions), tensor types, and constant tensor data.
#pragma once

#include "core/ir/data_type.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ramiel {

// One dimension: a known size, a named symbol ("N", "batch"), or unknown.
struct Dim {
    int64_t value = -1;  // >= 0 when known
    std::string symbol;  // set for symbolic dimensions

    static Dim known(int64_t v) { return Dim{v, {}}; }
    static Dim symbolic(std::string s) { return Dim{-1, std::move(s)}; }
    static Dim unknown() { return Dim{}; }

    bool isKnown() const { return value >= 0; }
    bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
};

struct Shape {
    std::vector<Dim> dims;

    Shape() = default;
    explicit Shape(std::vector<Dim> d) : dims(std::move(d)) {}
    static Shape of(const std::vector<int64_t>& sizes);

    size_t rank() const { return dims.size(); }
    bool isFullyKnown() const;
    // Element count; nullopt when a dimension is not known or the product overflows.
    std::optional<int64_t> numel() const;
    // Known sizes; nullopt unless fully known.
    std::optional<std::vector<int64_t>> sizes() const;
    // "1x3x224x224", "Nx3x?x?", "scalar".
    std::string toString() const;

    bool operator==(const Shape& o) const { return dims == o.dims; }
};

// Element type plus shape; `shape` is empty when even the rank is unknown.
struct TensorType {
    DataType dtype = DataType::Undefined;
    std::optional<Shape> shape;

    // Bytes of a tensor of this type; nullopt when not computable.
    std::optional<int64_t> byteSize() const;
    // "float[1x3x224x224]", "float[?]" (unknown rank).
    std::string toString() const;
};

// Constant tensor data (initializers, Constant nodes, attribute tensors).
// `data` holds the raw little-endian bytes; for an external tensor that was
// not loaded, `data` is empty and `externalLocation` names the file.
struct Tensor {
    DataType dtype = DataType::Undefined;
    std::vector<int64_t> dims;
    std::string data;
    std::string externalLocation;

    int64_t numel() const;  // product of dims (1 for a scalar)
    Shape shape() const { return Shape::of(dims); }
    TensorType type() const { return TensorType{dtype, shape()}; }
    bool hasData() const { return !data.empty() || numel() == 0; }

    // Typed read access; the caller checks dtype. Data may be unaligned, so
    // element access copies.
    template <typename T>
    T at(int64_t i) const;
    // The values as int64 (for Int64/Int32/... tensors; shape-arithmetic constants).
    std::optional<std::vector<int64_t>> toInt64s() const;
    // The values as doubles (float, double, integer and bool tensors).
    std::optional<std::vector<double>> toDoubles() const;
};

}  // namespace ramiel

#include <cstring>

template <typename T>
T ramiel::Tensor::at(int64_t i) const
{
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
    return v;
}
