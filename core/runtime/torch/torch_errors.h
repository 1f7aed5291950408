// libtorch's exceptions as Ramiel's errors: one line (c10 appends a multi-line
// backtrace to what()), and allocation failures as ErrorKind::Resource; its warnings as
// one line each.
#pragma once

#include "core/util/error.h"

#include <string>

namespace ramiel {

// Call inside a catch block: rethrows the exception in flight as
// Error(kind, file, prefix + its first line). std::bad_alloc and c10's allocation
// failures ("can't allocate memory", "Storage size calculation overflowed") become
// Resource; a ramiel::Error keeps its own kind when `keepErrorKind` (and its file, if it has one).
[[noreturn]] void rethrowAsError(ErrorKind kind, const std::string& file, const std::string& prefix,
                                 bool keepErrorKind = true);

// Once per process: libtorch's warnings go to stderr as one line ("libtorch warning: ..."),
// without glog's header; notices that an ATen function Ramiel calls is in beta are dropped
// (they say nothing about the model, and index_reduce_/scatter_reduce_ give them).
void installTorchWarningHandler();

// Runs f(), turning whatever it throws into an Error as rethrowAsError does.
template <typename F>
auto withTorchErrors(ErrorKind kind, const std::string& file, F&& f) -> decltype(f())
{
    try {
        return f();
    } catch (...) {
        rethrowAsError(kind, file, {});
    }
}

}  // namespace ramiel
