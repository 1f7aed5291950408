// Writes a file so that readers see either the old or the new content, never
// half of it, and a failed write leaves the old file as it was.
#pragma once

#include <string>
#include <string_view>

namespace ramiel {

// Throws Error(Io) naming the path and the reason.
void writeFileAtomically(const std::string& path, std::string_view content);

}  // namespace ramiel
