#include "core/util/environment.h"

#include "core/util/error.h"

#include <cstdlib>

namespace ramiel {

size_t environmentChoice(const char* variable, const std::vector<std::string>& values)
{
    const char* v = std::getenv(variable);
    const std::string chosen = v ? v : "";
    if (chosen.empty())
        return 0;
    std::string allowed;
    for (size_t i = 0; i < values.size(); ++i) {
        if (values[i] == chosen)
            return i;
        allowed += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + values[i];
    }
    throw Error(ErrorKind::Usage, {}, std::string(variable) + " is '" + chosen + "'; it may be " + allowed);
}

}  // namespace ramiel
