#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/InferenceMode.h>
#if HAVE_ONEDNN
#include <dnnl.hpp>  // oneDNN's own API (libdnnl-dev), for convolutions as primitives made once
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>  // SiLU with AVX-512 where the processor has it
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <numeric>
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
#if __has_include(<unistd.h>)
#include <unistd.h>
#endif
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#ifndef WEIGHTS_FILE
#define WEIGHTS_FILE "weights.bin"
#endif

namespace {

using Ints = std::vector<int64_t>;
[[maybe_unused]] constexpr double kInf = std::numeric_limits<double>::infinity();
// <check-only> The namespace ends in main.cpp; closed here too, for this file on its own.
}  // namespace
// </check-only>
