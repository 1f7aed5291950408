// Memory limits: sizes taken from a model (a file, a tensor's shape) are checked
// against what this process can still allocate before anything is allocated,
// so a hostile size is one clear error instead of std::bad_alloc or the OOM killer.
#pragma once

#include <cstdint>
#include <string>

namespace ramiel {

// Bytes this process can still allocate: the least of the system's available
// memory (MemAvailable), its cgroup's headroom and its RLIMIT_AS headroom.
uint64_t availableMemoryBytes();

// Throws Error(Resource) naming `file` when `what` needs more than `available`
// (default: availableMemoryBytes()): "<what> needs 8.00 TiB, more than the 18.7 GiB of memory available".
void requireMemory(const std::string& file, const std::string& what, uint64_t bytes, uint64_t available = 0);

// Bytes of `count` elements of `elementBytes` each, or UINT64_MAX when that overflows
// (or a count is negative): a size no machine has, refused by requireMemory.
uint64_t byteCount(int64_t count, int64_t elementBytes);

}  // namespace ramiel
