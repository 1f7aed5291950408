// Reading a JSON file a user names (a run configuration, an earlier host state):
// one clear error for a file that cannot be opened and for one that is not JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ramiel {

// The parsed file. Throws Error(Io) "cannot open <what>" and Error(Usage)
// "not JSON: ...", both naming `path`.
nlohmann::json readJsonFile(const std::string& path, const std::string& what);

}  // namespace ramiel
