// Making text from a model safe to print: names in ONNX files are arbitrary
// bytes (NUL, newlines, escape sequences, invalid UTF-8).
#pragma once

#include <string>
#include <string_view>

namespace ramiel {

// Valid UTF-8 with control characters, DEL and invalid bytes written as \xNN
// (and backslash as \\), so the result is one printable line.
std::string printable(std::string_view text);

}  // namespace ramiel
