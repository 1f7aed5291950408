// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "slots.cpp"
struct Weights {};
Weights loadWeights(const std::string& path);
const std::vector<int> kThreads;
constexpr size_t kSlots = 0;
struct NonFiniteRun {
    explicit NonFiniteRun(const std::vector<at::Tensor>&) {}
};
#ifndef RAMIEL_CLASS
#define RAMIEL_CLASS Model  // placeholder: the class name
#endif
// placeholder: the generated members' declarations
#define RAMIEL_DECLARATIONS                                                                   \
    void runWorker(size_t k, const std::vector<at::Tensor>& inputs, Slots& slots) const;      \
    std::vector<at::Tensor> outputs(const std::vector<at::Tensor>& inputs, Slots& slots) const;
// </check-only>
// The model with its weights: forward() runs every node serially; forwardParallel() runs
// the schedule, worker k running workerK() with kThreads[k] intra-op threads. The calling
// thread is worker 0 when it has kThreads[0] threads itself (it saves a wake-up and a
// hand-off each run); the other workers have threads of their own, started by the first
// call and parked between runs. Values cross workers through one-shot slots made fresh
// for each run.
class RAMIEL_CLASS {
public:
    explicit RAMIEL_CLASS(const std::string& weightsFile = WEIGHTS_FILE)
        : w(loadWeights(weightsFile)), errors_(kThreads.size())
    {
    }
    ~RAMIEL_CLASS()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        start_.notify_all();
        for (std::thread& t : threads_)
            if (t.joinable())
                t.join();
    }
    RAMIEL_CLASS(const RAMIEL_CLASS&) = delete;
    RAMIEL_CLASS& operator=(const RAMIEL_CLASS&) = delete;

    // Every node in one topological order (run it under c10::InferenceMode).
    std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) const;

    // The schedule on kThreads.size() workers: the same result as forward().
    std::vector<at::Tensor> forwardParallel(const std::vector<at::Tensor>& inputs)
    {
        std::lock_guard<std::mutex> oneRunAtATime(runMutex_);
        const NonFiniteRun nonFiniteInputs(inputs);  // conv2d's Relu keeps NaN
        const size_t first = at::get_num_threads() == kThreads[0] ? 1 : 0;  // workers on threads of their own
        threads_.resize(kThreads.size());
        for (size_t c = first; c < kThreads.size(); ++c)
            if (!threads_[c].joinable())
                threads_[c] = std::thread([this, c] { loop(c); });
        Slots slots(kSlots);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            inputs_ = &inputs;
            slots_ = &slots;
            std::fill(errors_.begin(), errors_.end(), nullptr);
            pending_ = kThreads.size() - first;
            first_ = first;
            ++generation_;
        }
        start_.notify_all();
        if (first == 1) {
            c10::InferenceMode guard;
            work(0);
        }
        if (!spinBriefly([&] { return pending_.load() == 0; })) {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [&] { return pending_.load() == 0; });
        }
        for (const std::exception_ptr& e : errors_) {
            if (!e)
                continue;
            try {
                std::rethrow_exception(e);
            } catch (const Aborted&) {
            }
        }
        return outputs(inputs, slots);
    }

private:
    RAMIEL_DECLARATIONS

    void work(size_t c)
    {
        try {
            runWorker(c, *inputs_, *slots_);
        } catch (...) {
            errors_[c] = std::current_exception();
            slots_->abort();
        }
    }

    void loop(size_t c)
    {
        // Once per worker thread: get_num_threads() first makes ATen set this thread
        // up, which would otherwise overwrite the count at its first parallel operator.
        if (at::get_num_threads() != kThreads[c])
            at::set_num_threads(kThreads[c]);
        c10::InferenceMode guard;
        uint64_t seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                start_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_)
                    return;
                seen = generation_;
                if (c < first_)
                    continue;  // the caller runs this worker this time
            }
            work(c);
            if (--pending_ == 0) {
                { std::lock_guard<std::mutex> lock(mutex_); }  // the caller is either before its check or waiting
                done_.notify_all();
            }
        }
    }

    const Weights w;
    std::vector<std::thread> threads_;
    std::mutex runMutex_, mutex_;
    std::condition_variable start_, done_;
    uint64_t generation_ = 0;
    std::atomic<size_t> pending_{0};
    size_t first_ = 0;
    bool stop_ = false;
    const std::vector<at::Tensor>* inputs_ = nullptr;
    Slots* slots_ = nullptr;
    std::vector<std::exception_ptr> errors_;
};
