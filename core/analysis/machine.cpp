#include "core/analysis/machine.h"

#include "core/util/atomic_file.h"
#include "core/util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>
#include <filesystem>
#include <fstream>

namespace ramiel {

double measureHandoffSeconds(int rounds)
{
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;  // even: main's turn, odd: the partner's
    std::thread partner([&] {
        for (int i = 0; i < rounds; ++i) {
            std::unique_lock<std::mutex> lock(m);
            cv.wait(lock, [&] { return turn == 2 * i + 1; });
            ++turn;
            lock.unlock();
            cv.notify_all();
        }
    });
    std::vector<double> trips;
    for (int i = 0; i < rounds; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        {
            std::lock_guard<std::mutex> lock(m);
            ++turn;
        }
        cv.notify_all();
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return turn == 2 * i + 2; });
        trips.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    partner.join();
    std::nth_element(trips.begin(), trips.begin() + trips.size() / 2, trips.end());
    return trips[trips.size() / 2] / 2;
}

std::string cpuModelName()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                auto start = line.find_first_not_of(' ', colon + 1);
                return start == std::string::npos ? std::string() : line.substr(start);
            }
        }
    return "unknown";
}

std::string defaultMachineCachePath()
{
    namespace fs = std::filesystem;
    if (const char* d = std::getenv("RAMIEL_CACHE_DIR"); d && *d)
        return (fs::path(d) / "machine-v2.json").string();
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return (fs::path(x) / "ramiel" / "machine-v2.json").string();
    if (const char* h = std::getenv("HOME"); h && *h)
        return (fs::path(h) / ".cache" / "ramiel" / "machine-v2.json").string();
    return {};
}

MachineConstants loadMachineConstants(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw Error(ErrorKind::Io, path, "cannot open machine-constants file");
    nlohmann::json j;
    try {
        in >> j;
        MachineConstants m;
        m.flopsPerSecond = j.at("flops_per_second").get<double>();
        m.bytesPerSecond = j.at("bytes_per_second").get<double>();
        m.overheadSeconds = j.at("overhead_seconds").get<double>();
        m.handoffSeconds = j.value("handoff_seconds", m.handoffSeconds);
        m.cpu = j.value("cpu", std::string());
        m.measuredAt = j.value("measured_at", std::string());
        m.source = path;
        if (!(m.flopsPerSecond > 0) || !(m.bytesPerSecond > 0) || !(m.overheadSeconds >= 0))
            throw Error(ErrorKind::Usage, path, "machine constants must be positive");
        return m;
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, path,
                    std::string("not a machine-constants file (needs flops_per_second, bytes_per_second, "
                                "overhead_seconds): ") + e.what());
    }
}

std::optional<MachineConstants> loadCachedMachineConstants(const std::string& path)
{
    if (path.empty())
        return std::nullopt;
    try {
        MachineConstants m = loadMachineConstants(path);
        if (m.cpu != cpuModelName())
            return std::nullopt;
        m.source = "calibrated";
        return m;
    } catch (const Error&) {
        return std::nullopt;
    }
}

void saveMachineConstants(const MachineConstants& m, const std::string& path)
{
    nlohmann::json j = {
        {"flops_per_second", m.flopsPerSecond},
        {"bytes_per_second", m.bytesPerSecond},
        {"overhead_seconds", m.overheadSeconds},
        {"handoff_seconds", m.handoffSeconds},
        {"cpu", m.cpu},
        {"measured_at", m.measuredAt},
    };
    std::error_code ec;
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty())
        std::filesystem::create_directories(dir, ec);
    writeFileAtomically(path, j.dump(2) + "\n");
}

}  // namespace ramiel
