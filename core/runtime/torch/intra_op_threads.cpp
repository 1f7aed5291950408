#include "core/runtime/torch/intra_op_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <filesystem>

namespace ramiel {

void initIntraOpThreads() { at::set_num_threads(1); }

void useIntraOpThreads(int n)
{
    // ATen initializes a thread's setting on its first parallel call (from the
    // process-wide default); do that first so it cannot overwrite ours later.
    at::internal::lazy_init_num_threads();
    omp_set_num_threads(std::max(1, n));
}

int currentIntraOpThreads()
{
    at::internal::lazy_init_num_threads();
    return omp_get_max_threads();
}

std::string openMpLibrary()
{
    // The address this library calls is the definition the dynamic linker bound.
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) || !info.dli_fname)
        return "unknown";
    return std::filesystem::path(info.dli_fname).filename().string();
}

}  // namespace ramiel
