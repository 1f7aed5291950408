// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Another worker failed, so a value this one waits for will never come.
struct Aborted : std::exception {
    const char* what() const noexcept override { return "aborted"; }
};

// Waits up to 20 us for `ready` before the caller blocks: a value that comes within
// microseconds is taken without a sleep and a wake-up (each costs tens of them);
// longer waits block, so a waiting worker leaves its core to the others.
template <typename Ready>
bool spinBriefly(Ready ready)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    for (int i = 1;; ++i) {
        if (ready())
            return true;
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= until)
            return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

// One-shot hand-offs between workers: put() once, get() waits until then.
class Slots {
public:
    explicit Slots(size_t n) : values_(n), full_(new std::atomic<bool>[n]()) {}
    void put(size_t k, at::Tensor value)
    {
        values_[k] = std::move(value);
        full_[k].store(true);
        wakeSleepers();
    }
    at::Tensor get(size_t k)
    {
        auto ready = [&] { return full_[k].load() || aborted_.load(); };
        if (!spinBriefly(ready)) {
            ++sleepers_;  // before the check under the lock: put() then sees it and notifies
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, ready);
            --sleepers_;
        }
        if (!full_[k].load())
            throw Aborted();
        return values_[k];
    }
    void abort()
    {
        aborted_.store(true);
        wakeSleepers();
    }

private:
    void wakeSleepers()
    {
        if (sleepers_.load() == 0)
            return;
        { std::lock_guard<std::mutex> lock(mutex_); }  // a sleeper is either before its check or waiting
        changed_.notify_all();
    }

    std::vector<at::Tensor> values_;
    std::unique_ptr<std::atomic<bool>[]> full_;
    std::atomic<bool> aborted_{false};
    std::atomic<int> sleepers_{0};
    std::mutex mutex_;
    std::condition_variable changed_;
};
