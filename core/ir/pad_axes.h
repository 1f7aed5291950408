// Pad's pads as one begin and one end for every axis. Since opset 18 a Pad may name the axes
// its pads are for (input 3, negative ones counting from the rank): pads then holds the begins
// of those axes, then their ends, and every other axis is not padded. The node checks, the
// runtime's kernel and code generation read them here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ramiel {

// The pads of every axis of a rank-`rank` input (begins, then ends) from `pads` on `axes`;
// std::nullopt with `problem` set where an axis is outside the rank or named twice, or pads
// does not hold two values per axis.
std::optional<std::vector<int64_t>> padsOfEveryAxis(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                                                    int64_t rank, std::string& problem);

}  // namespace ramiel
