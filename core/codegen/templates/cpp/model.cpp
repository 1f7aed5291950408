// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "slots.cpp"
struct Weights {};
using Cluster = void (*)(const Weights&, const std::vector<at::Tensor>&, Slots&);
const std::vector<Cluster> kClusters;
const std::vector<int> kThreads;
constexpr size_t kSlots = 0;
const at::Tensor RAMIEL_OUTPUTS;  // placeholder: the graph outputs, one line each
// </check-only>
// One persistent std::thread per cluster, parked between runs; values cross
// workers through one-shot slots made fresh for each run.
class Workers {
public:
    explicit Workers(const Weights& w) : w_(w), errors_(kClusters.size())
    {
        for (size_t c = 0; c < kClusters.size(); ++c)
            threads_.emplace_back([this, c] { loop(c); });
    }
    ~Workers()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        start_.notify_all();
        for (std::thread& t : threads_)
            t.join();
    }

    std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs)
    {
        Slots slots(kSlots);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            inputs_ = &inputs;
            slots_ = &slots;
            std::fill(errors_.begin(), errors_.end(), nullptr);
            pending_ = kClusters.size();
            ++generation_;
        }
        start_.notify_all();
        {
            std::unique_lock<std::mutex> lock(mutex_);
            done_.wait(lock, [&] { return pending_ == 0; });
        }
        for (const std::exception_ptr& e : errors_) {
            if (!e)
                continue;
            try {
                std::rethrow_exception(e);
            } catch (const Aborted&) {
            }
        }
        return outputs(w_, inputs, slots);
    }

private:
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
            }
            try {
                kClusters[c](w_, *inputs_, *slots_);
            } catch (...) {
                errors_[c] = std::current_exception();
                slots_->abort();
            }
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0)
                done_.notify_all();
        }
    }

    static std::vector<at::Tensor> outputs([[maybe_unused]] const Weights& w,
                                           [[maybe_unused]] const std::vector<at::Tensor>& inputs, Slots& slots);

    const Weights& w_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    uint64_t generation_ = 0;
    size_t pending_ = 0;
    bool stop_ = false;
    const std::vector<at::Tensor>* inputs_ = nullptr;
    Slots* slots_ = nullptr;
    std::vector<std::exception_ptr> errors_;
};

// The graph outputs, from the slots (copies concatenated along the batch).
std::vector<at::Tensor> Workers::outputs(const Weights& w, const std::vector<at::Tensor>& inputs, Slots& slots)
{
    return {
        RAMIEL_OUTPUTS
    };
}
