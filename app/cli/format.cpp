#include "format.h"

#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace ramiel::cli {

std::string formatFixed(double value, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

static std::string threeDigits(double v)
{
    return formatFixed(v, v >= 100 ? 0 : v >= 10 ? 1 : 2);
}

std::string formatSeconds(double s)
{
    if (std::isnan(s))
        return "unknown";
    const double a = std::fabs(s);
    if (a >= 1)
        return threeDigits(s) + " s";
    if (a >= 1e-3)
        return threeDigits(s * 1e3) + " ms";
    if (a >= 1e-6 || a == 0)
        return threeDigits(s * 1e6) + " us";
    return threeDigits(s * 1e9) + " ns";
}

std::string formatQuantity(double v, const char* unit)
{
    const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (std::fabs(v) >= 1000 && i < 5) {
        v /= 1000;
        ++i;
    }
    const bool whole = i == 0 && v == std::floor(v);
    return (whole ? formatFixed(v, 0) : threeDigits(v)) + " " + prefixes[i] + unit;
}

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
