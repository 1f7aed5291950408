#include "core/runtime/runtime.h"

#include "core/util/error.h"

#include <dlfcn.h>

#include <atomic>
#include <chrono>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

extern "C" {
using RamielCreateRuntime = ramiel::Runtime* (*)();
}

namespace ramiel {

namespace {

std::string runtimeLibraryPath()
{
    if (const char* p = std::getenv("RAMIEL_RUNTIME_LIBRARY"); p && *p)
        return p;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&runtimeLibraryPath), &info) && info.dli_fname)
        return (std::filesystem::path(info.dli_fname).parent_path() / "libramiel_runtime.so").string();
    return "libramiel_runtime.so";
}

std::atomic<double> loadSeconds{0};

}  // namespace

double runtimeLoadSeconds() { return loadSeconds.load(); }

Runtime& runtime()
{
    static std::once_flag once;
    static std::unique_ptr<Runtime> instance;
    static std::string failure;
    std::call_once(once, [] {
        const std::string path = runtimeLibraryPath();
        // libgomp (loaded with libtorch) reads this once. Its default lets an idle
        // OpenMP team spin for about a millisecond after each parallel region:
        // when a hybrid worker goes from 2 threads back to 1, the spinning helper
        // takes the core the other worker needs (inception_v3 hybrid 171 -> 149 ms),
        // and on a busy machine a thread spins at every barrier while the one it
        // waits for is off the CPU (mobilenet_v2 on 2 threads: 121 ms at 20000,
        // 31 ms at 3000; idle, 3000 is as fast as 20000). docs/runtime.md, Threads.
        // A user's own setting wins.
        setenv("GOMP_SPINCOUNT", "3000", 0);
        // The same for LLVM's libomp, which the programs link in libgomp's place and which
        // reads its settings at its first OpenMP call: an idle team spins for 1 ms (its
        // default, 200 ms, holds the second core long after a hybrid worker's region).
        setenv("KMP_BLOCKTIME", "1", 0);
        // And its spinning threads yield the CPU only where the process has more OpenMP
        // threads than CPUs (2), not on every spin (1, its default): each yield handed the
        // core to any runnable thread, a nice-19 background job's too, for a scheduler tick,
        // while the team's next region waited. Beside a nice-19 busy loop googlenet on two
        // threads took 26.6-27.7 ms, now 12.3-13.5 (11.1-12.0 alone); alone and beside a
        // nice-0 one, no change (docs/runtime.md, Threads).
        setenv("KMP_USE_YIELD", "2", 0);
        const auto start = std::chrono::steady_clock::now();
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            failure = std::string("cannot load the libtorch runtime: ") + (why ? why : "unknown reason");
            return;
        }
        auto create = reinterpret_cast<RamielCreateRuntime>(dlsym(handle, "ramiel_create_runtime"));
        if (!create) {
            failure = "the runtime library has no ramiel_create_runtime entry point";
            return;
        }
        instance.reset(create());  // the library stays loaded for the life of the process
        loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
    if (!instance)
        throw Error(ErrorKind::Unsupported, runtimeLibraryPath(), failure);
    return *instance;
}

MachineConstants obtainMachineConstants(const std::string& overridePath)
{
    if (!overridePath.empty())
        return loadMachineConstants(overridePath);
    const std::string cache = defaultMachineCachePath();
    if (auto cached = loadCachedMachineConstants(cache))
        return *cached;
    MachineConstants m = runtime().calibrate().constants;
    m.handoffSeconds = measureHandoffSeconds();
    if (!cache.empty()) {
        try {
            saveMachineConstants(m, cache);
        } catch (const Error&) {
            // An unwritable cache only means measuring again next time.
        }
    }
    return m;
}

}  // namespace ramiel
