// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Another worker failed, so a value this one waits for will never come.
struct Aborted : std::exception {
    const char* what() const noexcept override { return "aborted"; }
};

// One-shot hand-offs between workers: put() once, get() blocks until then.
class Slots {
public:
    explicit Slots(size_t n) : values_(n), full_(n, false) {}
    void put(size_t k, at::Tensor value)
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            values_[k] = std::move(value);
            full_[k] = true;
        }
        changed_.notify_all();
    }
    at::Tensor get(size_t k)
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return full_[k] || aborted_; });
        if (!full_[k])
            throw Aborted();
        return values_[k];
    }
    void abort()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            aborted_ = true;
        }
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<at::Tensor> values_;
    std::vector<bool> full_;
    bool aborted_ = false;
};
