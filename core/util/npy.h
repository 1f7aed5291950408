// NumPy .npy files (format version 1.0/2.0, C order) to and from Tensor.
#pragma once

#include "core/ir/tensor.h"

#include <string>

namespace ramiel {

// Throws Error(Io) if unreadable, Error(Usage) if not a supported .npy.
Tensor readNpy(const std::string& path);
// Writes atomically; throws Error(Io).
void writeNpy(const std::string& path, const Tensor& t);

// A file name from an arbitrary value name: letters, digits, '-', '_', '.'
// kept, everything else '_'; never empty, never "." or "..".
std::string sanitizedFileName(const std::string& name);

}  // namespace ramiel
