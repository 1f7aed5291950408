#include "core/runtime/torch/calibration.h"
#include "core/runtime/torch/intra_op_threads.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

namespace ramiel {

namespace {

template <typename F>
double medianSeconds(int repeats, F&& body)
{
    body();  // warm-up: first-touch pages, kernel selection
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        body();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
}

std::string today()
{
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
    return buf;
}

}  // namespace

CalibrationDetail calibrateWithATen()
{
    IntraOpThreadsScope oneThread(1);
    CalibrationDetail d;

    d.gemmSize = 384;
    const auto a = at::randn({d.gemmSize, d.gemmSize});
    const auto b = at::randn({d.gemmSize, d.gemmSize});
    auto c = at::empty({d.gemmSize, d.gemmSize});
    d.gemmSeconds = medianSeconds(9, [&] { at::mm_out(c, a, b); });

    const int64_t elements = 8 << 20;  // 32 MiB of floats: larger than the caches
    const auto src = at::rand({elements});
    auto dst = at::empty({elements});
    d.copySeconds = medianSeconds(7, [&] { dst.copy_(src); });
    d.copyBytes = 2.0 * static_cast<double>(elements) * 4.0;

    const auto tiny = at::ones({1});
    auto tinyOut = at::empty({1});
    const double perCall = medianSeconds(5, [&] {
        for (int i = 0; i < 200; ++i)
            at::add_out(tinyOut, tiny, tiny);
    }) / 200.0;

    const double n = d.gemmSize;
    d.constants.flopsPerSecond = 2.0 * n * n * n / d.gemmSeconds;
    d.constants.bytesPerSecond = d.copyBytes / d.copySeconds;
    d.constants.overheadSeconds = perCall;
    d.constants.source = "calibrated";
    d.constants.cpu = cpuModelName();
    d.constants.measuredAt = today();
    return d;
}

}  // namespace ramiel
