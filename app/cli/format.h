// Human-readable numbers for the CLI's text reports; times and fixed decimals are
// core's (core/util/text.h), the same as Studio's.
#pragma once

#include "core/util/text.h"

#include <string>

namespace ramiel::cli {

std::string formatQuantity(double value, const char* unit);  // "5.71 GFLOP", "95.3 MB"

// A progress bar on stderr when it is a terminal ("  [####    ] 3/10 runs"); cleared when done == total.
void showProgress(const std::string& what, int done, int total);

}  // namespace ramiel::cli
