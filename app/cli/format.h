// Human-readable numbers for the CLI's text reports.
#pragma once

#include <string>

namespace ramiel::cli {

std::string formatSeconds(double seconds);              // "12.3 ms", "850 us"
std::string formatQuantity(double value, const char* unit);  // "5.71 GFLOP", "95.3 MB"
std::string formatFixed(double value, int decimals);

// A progress bar on stderr when it is a terminal ("  [####    ] 3/10 runs"); cleared when done == total.
void showProgress(const std::string& what, int done, int total);

}  // namespace ramiel::cli
