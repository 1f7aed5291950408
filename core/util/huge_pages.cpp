#include "core/util/huge_pages.h"

#include <cstdlib>

#include <unistd.h>

namespace ramiel {

void restartWithHugePages(char** argv)
{
    if (std::getenv("GLIBC_TUNABLES"))
        return;
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);
}

}  // namespace ramiel
