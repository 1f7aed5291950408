#include "core/util/huge_pages.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <unistd.h>

namespace ramiel {

namespace {

// GLIBC_TUNABLES (null: unset) with huge pages for the heap added; none where it
// names glibc.malloc.hugetlb already.
std::optional<std::string> tunablesWithHugePages(const char* tunables)
{
    constexpr const char* kHugePages = "glibc.malloc.hugetlb=1";
    const std::string set = tunables ? tunables : "";
    if (set.find("glibc.malloc.hugetlb") != std::string::npos)
        return std::nullopt;  // the user's own choice, or this program's after its restart
    return set.empty() ? std::string(kHugePages) : set + ":" + kHugePages;
}

}  // namespace

void restartWithHugePages(char** argv)
{
    const std::optional<std::string> tunables = tunablesWithHugePages(std::getenv("GLIBC_TUNABLES"));
    if (!tunables)
        return;
    setenv("GLIBC_TUNABLES", tunables->c_str(), 1);
    execv("/proc/self/exe", argv);
}

}  // namespace ramiel
