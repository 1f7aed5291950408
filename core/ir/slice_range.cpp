#include "core/ir/slice_range.h"

#include <algorithm>

namespace ramiel {

void clampSlice(int64_t dim, int64_t& step, int64_t& start, int64_t& end)
{
    const int64_t size = std::max<int64_t>(dim, 1);
    step = std::clamp(step, -size, size);
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
    } else {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
    }
}

}  // namespace ramiel
