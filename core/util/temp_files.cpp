#include "core/util/temp_files.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace ramiel {

namespace {

enum State : int { Free, Filling, Ready };

struct Slot {
    std::atomic<int> state{Free};
    char path[4096];
};

// Static storage: nothing to allocate or construct in the handler.
Slot slots[64];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads these");

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Async-signal-safe: atomics, unlink and raise only.
extern "C" void removeTemporariesAndReraise(int sig)
{
    const int savedErrno = errno;
    for (Slot& s : slots)
        if (s.state.load(std::memory_order_acquire) == Ready)
            ::unlink(s.path);
    errno = savedErrno;
    // SA_RESETHAND put back the default action; the signal is blocked until this returns.
    ::raise(sig);
}

// Checked at every registration (three sigaction calls), so a signal that the
// program sets back to its default later is covered as well.
void installHandlers()
{
    for (int sig : kSignals) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue;  // ours already, ignored, or the program handles it itself
        struct sigaction sa {};
        sa.sa_handler = removeTemporariesAndReraise;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        ::sigaction(sig, &sa, nullptr);
    }
}

}  // namespace

int registerTemporaryFile(const std::string& path)
{
    installHandlers();
    if (path.size() >= sizeof(Slot::path))
        return -1;
    for (int i = 0; i < int(std::size(slots)); ++i) {
        int expected = Free;
        if (!slots[i].state.compare_exchange_strong(expected, Filling, std::memory_order_acq_rel))
            continue;
        std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
        slots[i].state.store(Ready, std::memory_order_release);
        return i;
    }
    return -1;
}

void forgetTemporaryFile(int slot)
{
    if (slot >= 0 && slot < int(std::size(slots)))
        slots[slot].state.store(Free, std::memory_order_release);
}

}  // namespace ramiel
