// The machine's state at a moment, reported beside measured times. On a shared
// host the same configuration's time moves with the host's load and with how
// long a cache line takes from one core to another (on one 2-vCPU cloud host
// 60-900 ns within a day), so a table of times says what it was measured on.
#pragma once

namespace ramiel {

struct HostState {
    int cores = 0;                // CPUs this process may run on (its affinity mask)
    double loadAverage = -1;      // 1-minute load average; < 0: unknown
    double roundTripSeconds = -1; // a cache line to another core and back; < 0: not measured
    int cpuA = -1, cpuB = -1;     // the two CPUs the round trip was measured between
    // All CPUs' time since boot and the part of it a hypervisor ran something else
    // on them ("steal", /proc/stat); < 0: unknown.
    double cpuSeconds = -1, stolenSeconds = -1;
};

// Reads the load average and, where the process may use two CPUs or more, times
// a cache line's round trip between the first two: one thread pinned to each,
// taking turns to write one atomic word (the median of 3 trials of at most
// 20 ms each; on a busy core a trial ends at its limit and says so by its time).
HostState probeHost();

// The share of the CPUs' time that the hypervisor took between two states (on a
// shared cloud host, other tenants' work); < 0: unknown.
double stolenShare(const HostState& before, const HostState& after);

// Whether the round trip changed more than kRoundTripMoved times between two
// states: a cloud host moved its vCPUs between cores that share a cache and cores
// that do not (60 against 340 ns on one host, for seconds at a time), and times
// taken on either side compare only with their own. False where either is unknown.
constexpr double kRoundTripMoved = 2.0;
bool roundTripMoved(const HostState& before, const HostState& after);

}  // namespace ramiel
