// Settings read from the environment, for comparisons that must not need a rebuild.
#pragma once

#include <string>
#include <vector>

namespace ramiel {

// The index in `values` of environment variable `variable`'s value; 0 (the
// default) when it is unset or empty. Throws Error(Usage) naming the variable
// and the values it may take for anything else.
size_t environmentChoice(const char* variable, const std::vector<std::string>& values);

}  // namespace ramiel
