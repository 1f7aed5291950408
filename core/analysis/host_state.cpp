#include "core/analysis/host_state.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ramiel {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> allowedCpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set))
            cpus.push_back(c);
    return cpus;
}

bool pinTo(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// One trial: the thread on `a` writes an odd turn, the one on `b` answers with the
// next even one, until `exchanges` round trips or `limit` have passed. Seconds per
// round trip; < 0 when a thread could not be pinned.
double roundTrip(int a, int b, int exchanges, Clock::duration limit)
{
    struct alignas(64) Word {
        std::atomic<uint64_t> value{0};
    };
    Word turn, stop, pinned;  // each on a cache line of its own
    double seconds = -1;
    std::thread partner([&] {
        pinned.value += pinTo(b) ? 1 : 100;
        for (uint64_t i = 0; !stop.value.load(std::memory_order_relaxed); ++i) {
            while (turn.value.load(std::memory_order_acquire) != 2 * i + 1)
                if (stop.value.load(std::memory_order_relaxed))
                    return;
            turn.value.store(2 * i + 2, std::memory_order_release);
        }
    });
    std::thread pinger([&] {
        const bool ok = pinTo(a);
        while (pinned.value.load() == 0)  // the partner is on its CPU before the clock starts
            std::this_thread::yield();
        if (!ok || pinned.value.load() != 1) {
            stop.value = 1;
            return;
        }
        const auto t0 = Clock::now(), deadline = t0 + limit;
        int done = 0;
        for (bool late = false; done < exchanges && !late;) {
            const uint64_t want = 2 * uint64_t(done) + 2;
            turn.value.store(want - 1, std::memory_order_release);
            for (unsigned spins = 1; turn.value.load(std::memory_order_acquire) != want; ++spins)
                if (spins % 4096 == 0 && Clock::now() > deadline) {
                    late = true;  // the partner's CPU is busy with something else
                    break;
                }
            done += late ? 0 : 1;
        }
        seconds = std::chrono::duration<double>(Clock::now() - t0).count() / std::max(done, 1);
        stop.value = 1;
    });
    pinger.join();
    partner.join();
    return seconds;
}

// The first line of /proc/stat: "cpu user nice system idle iowait irq softirq steal ..."
// in clock ticks, summed over the CPUs.
void readCpuTimes(HostState& h)
{
    std::ifstream in("/proc/stat");
    std::string line, label;
    if (!std::getline(in, line))
        return;
    std::istringstream fields(line);
    double ticks[8];
    if (!(fields >> label) || label != "cpu")
        return;
    for (double& t : ticks)
        if (!(fields >> t))
            return;
    const double hz = double(sysconf(_SC_CLK_TCK));
    if (hz <= 0)
        return;
    double total = 0;
    for (double t : ticks)
        total += t;  // guest time is counted in user time already
    h.cpuSeconds = total / hz;
    h.stolenSeconds = ticks[7] / hz;
}

}  // namespace

double stolenShare(const HostState& before, const HostState& after)
{
    const double cpu = after.cpuSeconds - before.cpuSeconds;
    if (before.cpuSeconds < 0 || after.cpuSeconds < 0 || cpu <= 0)
        return -1;
    return std::clamp((after.stolenSeconds - before.stolenSeconds) / cpu, 0.0, 1.0);
}

bool roundTripMoved(const HostState& before, const HostState& after)
{
    const double a = before.roundTripSeconds, b = after.roundTripSeconds;
    return a > 0 && b > 0 && std::max(a, b) > kRoundTripMoved * std::min(a, b);
}

HostState probeHost()
{
    HostState h;
    const std::vector<int> cpus = allowedCpus();
    h.cores = int(cpus.size());
    double load = 0;
    if (getloadavg(&load, 1) == 1)
        h.loadAverage = load;
    readCpuTimes(h);
    if (cpus.size() < 2)
        return h;
    const auto limit = std::chrono::milliseconds(20);
    roundTrip(cpus[0], cpus[1], 2000, limit);  // first touches, threads started
    std::vector<double> trials;
    for (int t = 0; t < 3; ++t) {
        const double s = roundTrip(cpus[0], cpus[1], 20000, limit);
        if (s < 0)
            return h;
        trials.push_back(s);
    }
    std::sort(trials.begin(), trials.end());
    h.roundTripSeconds = trials[1];
    h.cpuA = cpus[0];
    h.cpuB = cpus[1];
    return h;
}

}  // namespace ramiel
