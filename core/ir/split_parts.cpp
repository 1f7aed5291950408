#include "core/ir/split_parts.h"

namespace ramiel {

SplitParts splitParts(int64_t opset, int64_t size, int64_t parts)
{
    const std::string what = std::to_string(size) + (size == 1 ? " element" : " elements");
    if (parts < 1)
        return {{}, "Split has no outputs"};
    if (opset < 18) {
        if (size % parts != 0)
            return {{}, what + " do not divide into " + std::to_string(parts) +
                            " equal parts (give 'split', or use opset 18's num_outputs)"};
        return {std::vector<int64_t>(size_t(parts), size / parts), {}};
    }
    const int64_t chunk = size / parts + (size % parts != 0);
    if (size > 0 && (parts - 1) * chunk >= size)
        return {{}, what + " leave the last of " + std::to_string(parts) + " parts of " + std::to_string(chunk) +
                        " empty"};
    std::vector<int64_t> sizes(size_t(parts), chunk);
    sizes.back() = size - (parts - 1) * chunk;
    return {sizes, {}};
}

}  // namespace ramiel
