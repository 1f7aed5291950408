#include "core/runtime/torch/intra_op_threads.h"

#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>

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

}  // namespace ramiel
