// Errors raised by the core library: one exception type whose kind tells
// callers (the CLI's exit codes, the GUI's dialogs) what went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace ramiel {

enum class ErrorKind {
    Internal = 1,         // a bug: an invariant broke
    Usage = 2,            // bad option or argument
    Io = 3,               // file missing, unreadable, unwritable
    NotOnnx = 4,          // not a protobuf, truncated, or no graph in it
    InvalidGraph = 5,     // cycle, undefined value, duplicate producer, empty graph
    ExternalData = 6,     // external-data file missing, outside the model folder, too short
    Unsupported = 7,      // valid ONNX that Ramiel cannot handle (e.g. an operator)
    Runtime = 8,          // a node failed while the model ran
    Resource = 9,         // more memory than the machine has (a file, a tensor, an allocation)
};

// Process exit code for an error kind (the CLI documents these in docs/cli.md):
// the kind's number; resource errors share 8 with run-time errors.
inline int exitCode(ErrorKind k) { return k == ErrorKind::Resource ? 8 : static_cast<int>(k); }

const char* errorKindName(ErrorKind k);

class Error : public std::runtime_error {
public:
    // `file` is the path the problem is about (may be empty); `message` is one
    // sentence without the file name: what() joins the two as "file: message".
    // Control characters and invalid UTF-8 are escaped (see util/text.h).
    Error(ErrorKind kind, std::string file, const std::string& message);

    ErrorKind kind() const { return kind_; }
    const std::string& file() const { return file_; }
    const std::string& message() const { return message_; }

private:
    ErrorKind kind_;
    std::string file_;
    std::string message_;
};

}  // namespace ramiel
