#include "core/util/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace ramiel {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8SequenceLength(std::string_view s, size_t i)
{
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size())
        return 0;
    for (size_t k = 1; k < n; ++k) {
        if ((b(i + k) & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    const bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
    return overlong || surrogate || cp > 0x10ffff ? 0 : n;
}

}  // namespace

std::string printable(std::string_view text)
{
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) {
            if (c == '\\')
                out += '\\';
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        if (c >= 0x80) {
            if (const size_t n = utf8SequenceLength(text, i)) {
                out.append(text.substr(i, n));
                i += n;
                continue;
            }
        }
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
        ++i;
    }
    return out;
}

std::string formatFixed(double value, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string formatThreeDigits(double v)
{
    const double a = std::fabs(v);
    return formatFixed(v, a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2);
}

std::string formatSeconds(double s)
{
    if (!std::isfinite(s))
        return "unknown";
    const double a = std::fabs(s);
    if (a >= 0.9995)
        return formatThreeDigits(s) + " s";
    if (a >= 0.9995e-3)
        return formatThreeDigits(s * 1e3) + " ms";
    if (a >= 0.9995e-6 || a == 0)
        return formatThreeDigits(s * 1e6) + " us";
    return formatThreeDigits(s * 1e9) + " ns";
}

namespace {

std::string scaled(double v, double base, const char* const* prefixes, int count, const std::string& unit)
{
    if (!std::isfinite(v))
        return "unknown";
    int i = 0;
    // Move up a prefix once the figure would print as base or more ("1024 KiB" reads as "1.00 MiB").
    while (i + 1 < count && std::fabs(v) >= base - 0.5) {
        v /= base;
        ++i;
    }
    const bool whole = i == 0 && v == std::floor(v);
    const std::string figure = whole ? formatFixed(v, 0) : formatThreeDigits(v), suffix = prefixes[i] + unit;
    return suffix.empty() ? figure : figure + " " + suffix;
}

}  // namespace

std::string formatBytes(double bytes)
{
    static const char* const prefixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    return scaled(bytes, 1024.0, prefixes, 7, "B");
}

std::string formatDecimal(double value, const std::string& unit)
{
    static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    return scaled(value, 1000.0, prefixes, 7, unit);
}

std::string formatFlops(double flops) { return formatDecimal(flops, "FLOP"); }

std::string countOf(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string shellWords(const std::vector<std::string>& words)
{
    std::string line;
    for (const std::string& w : words) {
        const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || (c != '\0' && std::strchr("_./=,:+-", c) != nullptr);
        });
        std::string quoted = "'";
        for (char c : w)
            quoted += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);  // no backslash: comments double them
        line += (line.empty() ? "" : " ") + (plain ? w : quoted + "'");
    }
    return line;
}

}  // namespace ramiel
