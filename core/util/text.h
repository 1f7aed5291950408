// Making text from a model safe to print: names in ONNX files are arbitrary
// bytes (NUL, newlines, escape sequences, invalid UTF-8); byte and FLOP
// counts and times written to read, one way for the CLI, Studio and the reports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ramiel {

// Valid UTF-8 with control characters, DEL and invalid bytes written as \xNN
// (and backslash as \\), so the result is one printable line.
std::string printable(std::string_view text);

// Sizes in binary units with three significant digits: "512 B", "1.50 KiB",
// "13.3 MiB", "95.2 GiB"; "unknown" when not finite. The one way the CLI,
// Studio and error messages write a byte count.
std::string formatBytes(double bytes);
// A figure with a decimal prefix and three significant digits: "23.8 M" for
// (value 2.38e7, unit ""), "71.1 GFLOP/s", "13.0 GB/s"; whole figures under
// 1000 without decimals ("950 FLOP"); "unknown" when not finite. For counts and rates.
std::string formatDecimal(double value, const std::string& unit);
// Operation counts: formatDecimal(flops, "FLOP"), "118 MFLOP", "5.71 GFLOP".
std::string formatFlops(double flops);
// A figure with three significant digits: "512", "13.3", "1.50".
std::string formatThreeDigits(double value);
// A fixed number of decimals: formatFixed(1.234, 2) is "1.23".
std::string formatFixed(double value, int decimals);
// Times with three significant digits in s, ms, us or ns: "2.50 s", "12.3 ms", "850 us",
// "66.0 ns"; "unknown" when not finite.
std::string formatSeconds(double seconds);
// "1 thread", "2 threads": a count with its noun, plural by adding "s".
std::string countOf(int n, const std::string& word);
// Words as a POSIX shell reads them back: each in single quotes unless it is made only of
// letters, digits and _ . / = , : + - (then as it is), a quote inside as '"'"', joined by spaces.
std::string shellWords(const std::vector<std::string>& words);

}  // namespace ramiel
