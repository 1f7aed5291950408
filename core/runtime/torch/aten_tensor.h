// Conversions between Ramiel's Tensor (raw bytes) and at::Tensor.
#pragma once

#include "core/ir/tensor.h"

#include <ATen/ATen.h>

#include <memory>
#include <optional>

namespace ramiel {

std::optional<at::ScalarType> scalarTypeOf(DataType t);
DataType dataTypeOf(at::ScalarType t);

// A contiguous CPU tensor holding a copy of the data. Throws Error(Unsupported)
// for element types ATen lacks (string, uint16/32/64).
at::Tensor toATen(const Tensor& t, const std::string& what);
// A graph's constant over its own bytes, no copy: the tensor keeps `t` alive. Nothing may write
// into it (a constant is shared by every node that reads it). A copy where the bytes are not
// exactly the tensor's elements.
at::Tensor constantToATen(const std::shared_ptr<const Tensor>& t, const std::string& what);
Tensor fromATen(const at::Tensor& t);

// Small integer tensors (shapes, axes, pads) as int64 values.
std::vector<int64_t> toInt64Vector(const at::Tensor& t);

}  // namespace ramiel
