#include "progress.h"

#include <cstdio>
#include <unistd.h>

namespace ramiel::cli {

void showProgress(const std::string& what, int done, int total)
{
    if (!isatty(STDERR_FILENO))
        return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\r  [%s%s] %d/%d %s   ", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), ' ').c_str(), done, total, what.c_str());
    if (done == total)
        std::fprintf(stderr, "\r%70s\r", "");
    std::fflush(stderr);
}

}  // namespace ramiel::cli
