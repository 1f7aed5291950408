#include "core/util/resources.h"

#include "core/util/error.h"
#include "core/util/text.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace ramiel {

namespace {

// The first number in `path`, or UINT64_MAX where there is none ("max", no file).
uint64_t readNumber(const std::string& path)
{
    std::ifstream in(path);
    unsigned long long v = 0;
    return in >> v ? uint64_t(v) : UINT64_MAX;
}

// "MemAvailable:   22934220 kB" and "VmSize:  123 kB" style lines.
uint64_t kilobyteField(const char* file, const std::string& key)
{
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.compare(0, key.size(), key) == 0) {
            unsigned long long kb = 0;
            if (std::sscanf(line.c_str() + key.size(), " %llu", &kb) == 1)
                return uint64_t(kb) * 1024;
        }
    return UINT64_MAX;
}

uint64_t headroom(uint64_t limit, uint64_t used)
{
    if (limit == UINT64_MAX || used == UINT64_MAX)
        return UINT64_MAX;
    return limit > used ? limit - used : 0;
}

// cgroup v2 (memory.max) or v1 (memory.limit_in_bytes), in the process's group or at the root.
uint64_t cgroupHeadroom()
{
    std::string v2, v1;
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        if (line.compare(0, 3, "0::") == 0)
            v2 = line.substr(3);
        else if (const auto at = line.find(":memory:"); at != std::string::npos)
            v1 = line.substr(at + 8);
    }
    uint64_t best = UINT64_MAX;
    for (const std::string& dir : {"/sys/fs/cgroup" + v2, std::string("/sys/fs/cgroup")})
        best = std::min(best, headroom(readNumber(dir + "/memory.max"), readNumber(dir + "/memory.current")));
    for (const std::string& dir : {"/sys/fs/cgroup/memory" + v1, std::string("/sys/fs/cgroup/memory")})
        best = std::min(best, headroom(readNumber(dir + "/memory.limit_in_bytes"), readNumber(dir + "/memory.usage_in_bytes")));
    return best;
}

}  // namespace

uint64_t availableMemoryBytes()
{
    uint64_t best = kilobyteField("/proc/meminfo", "MemAvailable:");
    best = std::min(best, cgroupHeadroom());
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
        best = std::min(best, headroom(uint64_t(as.rlim_cur), kilobyteField("/proc/self/status", "VmSize:")));
    return best;
}

uint64_t byteCount(int64_t count, int64_t elementBytes)
{
    int64_t bytes = 0;
    if (count < 0 || elementBytes < 0 || __builtin_mul_overflow(count, elementBytes, &bytes))
        return UINT64_MAX;
    return uint64_t(bytes);
}

void requireMemory(const std::string& file, const std::string& what, uint64_t bytes, uint64_t available)
{
    if (bytes <= 4096)
        return;
    if (available == 0)
        available = availableMemoryBytes();
    if (bytes <= available)
        return;
    const std::string size = bytes == UINT64_MAX ? std::string("more bytes than a 64-bit size can count")
                                                 : formatBytes(double(bytes));
    throw Error(ErrorKind::Resource, file,
                what + " needs " + size + ", more than the " + formatBytes(double(available)) + " of memory available");
}

}  // namespace ramiel
