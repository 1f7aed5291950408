// Tells a truncated ONNX file from one that is not a protobuf at all, by
// walking the top-level protobuf fields of a ModelProto without parsing them.
#pragma once

#include <string>
#include <string_view>

namespace ramiel {

// Empty when the top level is well-formed ModelProto wire data; otherwise a
// sentence saying what is wrong ("file is truncated: ...", "not a protobuf: ...").
std::string scanModelWireFormat(std::string_view bytes);

}  // namespace ramiel
