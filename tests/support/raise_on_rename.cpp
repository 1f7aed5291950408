// Test shim, loaded with LD_PRELOAD: rename() first raises the signal whose number
// $RAMIEL_TEST_RAISE_ON_RENAME holds, as if the user pressed Ctrl-C (or the
// session ended) just before a finished temporary replaced its target. Lets
// tst_bad_inputs interrupt the CLI mid-write without timing anything.
#include <dlfcn.h>

#include <csignal>
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) int rename(const char* from, const char* to)
{
    if (const char* sig = std::getenv("RAMIEL_TEST_RAISE_ON_RENAME"); sig && *sig)
        std::raise(std::atoi(sig));
    using Rename = int (*)(const char*, const char*);
    static const Rename real = reinterpret_cast<Rename>(dlsym(RTLD_NEXT, "rename"));
    return real(from, to);
}
