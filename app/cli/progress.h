// The CLI's progress bar for long measurements (bench, tune).
#pragma once

#include <string>

namespace ramiel::cli {

// A progress bar on stderr when it is a terminal ("  [####    ] 3/10 runs"); cleared when done == total.
void showProgress(const std::string& what, int done, int total);

}  // namespace ramiel::cli
