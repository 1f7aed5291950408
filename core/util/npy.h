// NumPy .npy files (format version 1.0/2.0, C order) to and from Tensor.
#pragma once

#include "core/ir/tensor.h"

#include <string>
#include <vector>

namespace ramiel {

// A .npy file's element type and dimensions, read from its header alone (the
// file's size checked against them).
struct NpyHeader {
    DataType dtype = DataType::Undefined;
    std::vector<int64_t> dims;
    uint64_t dataBytes = 0;
};

// Throw Error(Io) if unreadable, Error(Usage) if not a supported .npy.
NpyHeader readNpyHeader(const std::string& path);
Tensor readNpy(const std::string& path);
// Writes atomically; throws Error(Io), Error(Unsupported) for a type npyCanStore refuses.
void writeNpy(const std::string& path, const Tensor& t);
// Whether .npy has the element type (not bfloat16, string).
bool npyCanStore(DataType t);

// A file name from an arbitrary value name: letters, digits, '-', '_', '.'
// kept, everything else '_'; never empty, never "." or "..".
std::string sanitizedFileName(const std::string& name);

// One file name per value, in order: sanitizedFileName(name) + extension, or
// with "_2", "_3", ... before the extension where an earlier name took it
// ("out/1" and "out_1" give out_1.npy and out_1_2.npy).
std::vector<std::string> uniqueFileNames(const std::vector<std::string>& names, const std::string& extension);

}  // namespace ramiel
