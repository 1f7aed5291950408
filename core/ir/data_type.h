// Tensor element types. The numbering is ONNX's TensorProto.DataType, so a
// value read from a model converts with a cast.
#pragma once

#include <cstdint>
#include <string>

namespace ramiel {

enum class DataType : int32_t {
    Undefined = 0,
    Float = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
};

// Bytes per element; 0 for Undefined, String and codes this build does not know.
int64_t elementSize(DataType t);

// Lower-case name as ONNX writes it ("float", "int64", "bfloat16", ...).
std::string dataTypeName(DataType t);

// A DataType from an ONNX code; unknown codes map to Undefined.
DataType dataTypeFromOnnx(int32_t code);

}  // namespace ramiel
