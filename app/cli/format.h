// Human-readable numbers for the CLI's text reports.
#pragma once

#include "core/analysis/host_state.h"

#include <string>

namespace ramiel::cli {

std::string formatSeconds(double seconds);              // "12.3 ms", "850 us"
std::string formatQuantity(double value, const char* unit);  // "5.71 GFLOP", "95.3 MB"
std::string formatFixed(double value, int decimals);
// "load average 0.55, a cache line's round trip of 66.0 ns between CPUs 0 and 1" (shorter with `brief`)
std::string formatHost(const HostState& h, bool brief = false);
// "host: 2 CPUs; before, <formatHost>; after, <formatHost brief>; the hypervisor took 0.2 % of
// the CPUs' time in between": the machine around a timing
std::string formatHostAround(const HostState& before, const HostState& after);

// A progress bar on stderr when it is a terminal ("  [####    ] 3/10 runs"); cleared when done == total.
void showProgress(const std::string& what, int done, int total);

}  // namespace ramiel::cli
