#include "core/util/error.h"

#include "core/util/text.h"

namespace ramiel {

const char* errorKindName(ErrorKind k)
{
    switch (k) {
    case ErrorKind::Internal: return "internal error";
    case ErrorKind::Usage: return "usage error";
    case ErrorKind::Io: return "I/O error";
    case ErrorKind::NotOnnx: return "not an ONNX model";
    case ErrorKind::InvalidGraph: return "invalid graph";
    case ErrorKind::ExternalData: return "external data error";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Runtime: return "run-time error";
    case ErrorKind::Resource: return "not enough memory";
    }
    return "error";
}

static std::string joined(const std::string& file, const std::string& message)
{
    return file.empty() ? message : file + ": " + message;
}

// Messages quote names from models, which may hold any bytes: keep them one printable line.
Error::Error(ErrorKind kind, std::string file, const std::string& message)
    : std::runtime_error(joined(printable(file), printable(message))),
      kind_(kind),
      file_(std::move(file)),
      message_(printable(message))
{
}

}  // namespace ramiel
