#include "core/onnx/wire_scan.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <limits>

namespace ramiel {

namespace {

const char* modelFieldName(uint32_t field)
{
    switch (field) {
    case 1: return "ir_version";
    case 2: return "producer_name";
    case 3: return "producer_version";
    case 4: return "domain";
    case 5: return "model_version";
    case 6: return "doc_string";
    case 7: return "graph";
    case 8: return "opset_import";
    case 14: return "metadata_props";
    case 20: return "training_info";
    case 25: return "functions";
    default: return nullptr;
    }
}

// The wire type each ModelProto field must have (0 varint, 2 length-delimited).
int expectedWireType(uint32_t field)
{
    switch (field) {
    case 1:
    case 5: return 0;
    default: return 2;
    }
}

}  // namespace

std::string scanModelWireFormat(std::string_view bytes)
{
    // A model never starts with printable text; say so plainly for .pbtxt, JSON, HTML, ...
    size_t printable = 0;
    const size_t head = std::min<size_t>(bytes.size(), 64);
    for (size_t i = 0; i < head; ++i) {
        const unsigned char c = static_cast<unsigned char>(bytes[i]);
        printable += (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t';
    }
    if (head > 0 && printable == head)
        return "not an ONNX model: the file is text, not binary protobuf data";

    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        return "file is larger than 2 GiB, the most a protobuf can hold; store the weights as external data";
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(bytes.size()));
    const auto at = [&] { return std::to_string(in.CurrentPosition()); };
    bool sawField = false;
    while (true) {
        const int start = in.CurrentPosition();
        const uint32_t tag = in.ReadTag();
        if (tag == 0) {
            if (in.CurrentPosition() == static_cast<int>(bytes.size()) && start == in.CurrentPosition())
                return sawField ? std::string() : "not an ONNX model: no protobuf fields";
            return "not an ONNX model: not a protobuf message (invalid field tag at byte " + std::to_string(start) + ")";
        }
        const uint32_t field = tag >> 3;
        const int wireType = static_cast<int>(tag & 7);
        const char* name = modelFieldName(field);
        if (!name)
            return "not an ONNX model: unexpected protobuf field " + std::to_string(field) + " at byte " +
                   std::to_string(start) + " (a ModelProto has no such field)";
        if (wireType != expectedWireType(field))
            return "not an ONNX model: field '" + std::string(name) + "' at byte " + std::to_string(start) +
                   " has wire type " + std::to_string(wireType) + ", expected " +
                   std::to_string(expectedWireType(field));
        sawField = true;
        if (wireType == 0) {
            uint64_t ignored;
            if (!in.ReadVarint64(&ignored))
                return "file is truncated: field '" + std::string(name) + "' at byte " + std::to_string(start) +
                       " ends early";
            continue;
        }
        uint32_t length = 0;
        if (!in.ReadVarint32(&length))
            return "file is truncated: field '" + std::string(name) + "' at byte " + std::to_string(start) +
                   " ends early";
        const uint64_t remaining = bytes.size() - static_cast<uint64_t>(in.CurrentPosition());
        if (length > remaining)
            return "file is truncated: field '" + std::string(name) + "' at byte " + std::to_string(start) +
                   " declares " + std::to_string(length) + " bytes but only " + std::to_string(remaining) +
                   " remain";
        if (!in.Skip(static_cast<int>(length)))
            return "file is truncated at byte " + at();
    }
}

}  // namespace ramiel
