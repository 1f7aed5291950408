// Machine constants of the static cost model, and where they are kept.
#pragma once

#include <optional>
#include <string>

namespace ramiel {

// flopsPerSecond comes from a single-thread GEMM probe, bytesPerSecond from a
// single-thread copy probe, overheadSeconds from timing a tiny operator (see
// core/runtime/calibration.h). Single-thread, because in a parallel schedule
// each worker runs its operators on one thread.
struct MachineConstants {
    double flopsPerSecond = 50e9;
    double bytesPerSecond = 10e9;
    double overheadSeconds = 2e-6;
    double handoffSeconds = 20e-6;   // one value passed between two threads (a cross-cluster edge's fixed cost)
    std::string source = "default";  // "default", "calibrated", or the file they came from
    std::string cpu;                 // the processor they were measured on
    std::string measuredAt;          // ISO date of the calibration
};

// Median time to hand a value from one thread to another that sleeps on a
// condition variable, as the parallel executor does: half a ping-pong round trip.
double measureHandoffSeconds(int rounds = 2000);

// The processor's model name from /proc/cpuinfo ("unknown" elsewhere).
std::string cpuModelName();

// What a calibration measured, for reports.
struct CalibrationDetail {
    MachineConstants constants;
    int gemmSize = 0;        // n of the n x n x n float GEMM
    double gemmSeconds = 0;  // median
    double copyBytes = 0;    // bytes read + written by one copy
    double copySeconds = 0;  // median
};

// $RAMIEL_CACHE_DIR, else $XDG_CACHE_HOME/ramiel, else ~/.cache/ramiel, + "/machine-v2.json" (v2: with the hand-off time).
std::string defaultMachineCachePath();

// Reads constants from a JSON file written by saveMachineConstants (or by
// hand). Throws Error(Io) if unreadable, Error(Usage) if malformed.
MachineConstants loadMachineConstants(const std::string& path);

// Reads the cache; nullopt when missing, malformed, or measured on another CPU.
std::optional<MachineConstants> loadCachedMachineConstants(const std::string& path);

// Writes atomically (temporary file + rename). Throws Error(Io).
void saveMachineConstants(const MachineConstants& m, const std::string& path);

}  // namespace ramiel
