#include "core/ir/pad_axes.h"

namespace ramiel {

namespace {

std::string listText(const std::vector<int64_t>& v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

}  // namespace

std::optional<std::vector<int64_t>> padsOfEveryAxis(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                                                    int64_t rank, std::string& problem)
{
    if (pads.size() != 2 * axes.size()) {
        problem = "pads " + listText(pads) + " has " + std::to_string(pads.size()) + " values, axes " + listText(axes) +
                  " needs " + std::to_string(2 * axes.size());
        return std::nullopt;
    }
    std::vector<int64_t> every(size_t(2 * rank), 0);
    std::vector<bool> named(size_t(rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank) {
            problem = "axis " + std::to_string(axes[i]) + " is outside the input's rank " + std::to_string(rank);
            return std::nullopt;
        }
        if (named[size_t(axis)]) {
            problem = "axes " + listText(axes) + " names axis " + std::to_string(axis) + " twice";
            return std::nullopt;
        }
        named[size_t(axis)] = true;
        every[size_t(axis)] = pads[i];
        every[size_t(axis + rank)] = pads[i + axes.size()];
    }
    return every;
}

}  // namespace ramiel
