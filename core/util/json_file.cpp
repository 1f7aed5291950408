#include "core/util/json_file.h"

#include "core/util/error.h"

#include <fstream>

namespace ramiel {

nlohmann::json readJsonFile(const std::string& path, const std::string& what)
{
    std::ifstream in(path);
    if (!in)
        throw Error(ErrorKind::Io, path, "cannot open " + what);
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, path, std::string("not JSON: ") + e.what());
    }
}

}  // namespace ramiel
