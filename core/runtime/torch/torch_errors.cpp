#include "core/runtime/torch/torch_errors.h"

#include <c10/util/Exception.h>

#include <cstdio>
#include <mutex>
#include <new>

namespace ramiel {

namespace {

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

bool isAllocationFailure(const std::string& what)
{
    return what.find("can't allocate memory") != std::string::npos ||
           what.find("not enough memory") != std::string::npos ||
           what.find("Storage size calculation overflowed") != std::string::npos;
}

// "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate ..." -> "can't allocate ..."
std::string withoutAllocatorPrefix(const std::string& line)
{
    const std::string marker = "DefaultCPUAllocator: ";
    const auto at = line.find(marker);
    return at == std::string::npos ? line : line.substr(at + marker.size());
}

class OneLineWarnings final : public c10::WarningHandler {
public:
    void process(const c10::SourceLocation&, const std::string& msg, bool) override
    {
        if (msg.find("is in beta and the API may change") != std::string::npos)
            return;
        std::fprintf(stderr, "libtorch warning: %s\n", firstLine(msg).c_str());
    }
};

}  // namespace

void installTorchWarningHandler()
{
    static std::once_flag once;
    std::call_once(once, [] { c10::Warning::set_warning_handler(new OneLineWarnings); });  // outlives every warning
}

void rethrowAsError(ErrorKind kind, const std::string& file, const std::string& prefix, bool keepErrorKind)
{
    try {
        throw;
    } catch (const Error& e) {
        const ErrorKind k = e.kind() == ErrorKind::Resource || keepErrorKind ? e.kind() : kind;
        throw Error(k, e.file().empty() ? file : e.file(), prefix + e.message());
    } catch (const std::bad_alloc&) {
        throw Error(ErrorKind::Resource, file, prefix + "not enough memory (std::bad_alloc)");
    } catch (const c10::Error& e) {
        const std::string line = firstLine(e.what_without_backtrace());
        if (dynamic_cast<const c10::OutOfMemoryError*>(&e) || isAllocationFailure(line))
            throw Error(ErrorKind::Resource, file, prefix + "not enough memory: " + withoutAllocatorPrefix(line));
        throw Error(kind, file, prefix + line);
    } catch (const std::exception& e) {
        throw Error(kind, file, prefix + firstLine(e.what()));
    } catch (...) {
        throw Error(kind, file, prefix + "an unknown exception");
    }
}

}  // namespace ramiel
