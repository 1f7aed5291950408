#include "core/ir/data_type.h"

namespace ramiel {

int64_t elementSize(DataType t)
{
    switch (t) {
    case DataType::Float: return 4;
    case DataType::UInt8: return 1;
    case DataType::Int8: return 1;
    case DataType::UInt16: return 2;
    case DataType::Int16: return 2;
    case DataType::Int32: return 4;
    case DataType::Int64: return 8;
    case DataType::Bool: return 1;
    case DataType::Float16: return 2;
    case DataType::Double: return 8;
    case DataType::UInt32: return 4;
    case DataType::UInt64: return 8;
    case DataType::Complex64: return 8;
    case DataType::Complex128: return 16;
    case DataType::BFloat16: return 2;
    case DataType::Undefined:
    case DataType::String: return 0;
    }
    return 0;
}

std::string dataTypeName(DataType t)
{
    switch (t) {
    case DataType::Undefined: return "undefined";
    case DataType::Float: return "float";
    case DataType::UInt8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::UInt16: return "uint16";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::String: return "string";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Double: return "double";
    case DataType::UInt32: return "uint32";
    case DataType::UInt64: return "uint64";
    case DataType::Complex64: return "complex64";
    case DataType::Complex128: return "complex128";
    case DataType::BFloat16: return "bfloat16";
    }
    return "undefined";
}

DataType dataTypeFromOnnx(int32_t code)
{
    if (code < 0 || code > static_cast<int32_t>(DataType::BFloat16))
        return DataType::Undefined;
    return static_cast<DataType>(code);
}

}  // namespace ramiel
