#include "core/runtime/torch/executors.h"

#include "core/runtime/node_threads.h"
#include "core/runtime/torch/aligned_allocator.h"
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/compiled_model.h"
#include "core/runtime/torch/intra_op_threads.h"
#include "core/runtime/torch/torch_errors.h"
#include "core/schedule/validator.h"
#include "core/util/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace ramiel {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Waits up to `budget` for `ready` before the caller blocks: a value that comes
// within a few microseconds is taken without a sleep and a wake-up (each costs
// tens of microseconds); longer waits block, so an idle worker does not hold a
// core that another worker's intra-op threads need.
template <typename Ready>
bool spinBriefly(Ready ready, std::chrono::microseconds budget = std::chrono::microseconds(20))
{
    const auto until = Clock::now() + budget;
    for (int i = 1;; ++i) {
        if (ready())
            return true;
        if (i % 64 == 0 && Clock::now() >= until)
            return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

// The cores of a schedule whose items choose their own thread counts: an item
// takes up to the threads it was planned with, fewer when fewer cores are free,
// and waits only when none is (never while holding any), so the threads of
// running items add up to at most the cores and no wait can close a cycle.
class CoreTokens {
public:
    explicit CoreTokens(int cores) : free_(cores) {}
    int acquire(int want)
    {
        for (;;) {
            int f = free_.load();
            while (f > 0)
                if (free_.compare_exchange_weak(f, f - std::min(want, f)))
                    return std::min(want, f);
            if (!spinBriefly([&] { return free_.load() > 0; })) {
                std::unique_lock<std::mutex> lock(m_);
                ++sleepers_;  // before the check: release() then sees it and notifies
                freed_.wait(lock, [&] { return free_.load() > 0; });
                --sleepers_;
            }
        }
    }
    void release(int n)
    {
        free_ += n;
        if (sleepers_.load() == 0)
            return;  // the common case: no lock on the way out of every item
        { std::lock_guard<std::mutex> lock(m_); }  // a sleeper is either before its check or waiting
        freed_.notify_all();
    }

private:
    std::atomic<int> free_;
    std::atomic<int> sleepers_{0};
    std::mutex m_;
    std::condition_variable freed_;
};

// One thread, nodes in topological order; a value is dropped after its last consumer.
// On several intra-op threads, each node runs on all or on one (node_threads.h).
class SerialExecutor final : public Executor {
public:
    SerialExecutor(TorchCompiledModel& m, int threads)
        : m_(m), threads_(threads), trial_(executionOrder(m), threads, nodeThreadsChoice())
    {
        const Graph& g = m.graph();
        uses_.assign(g.valueCount(), 0);
        for (const Node& n : g.nodes()) {
            reads_.push_back(distinctReads(n));
            for (ValueId v : reads_.back())
                ++uses_[size_t(v)];
            std::vector<bool> once;  // per input: its value read once by the node (not twice, not by a body)
            for (ValueId v : n.inputs)
                once.push_back(v != kNone && std::count(n.inputs.begin(), n.inputs.end(), v) == 1 &&
                               std::count(n.implicitInputs.begin(), n.implicitInputs.end(), v) == 0);
            readOnce_.push_back(std::move(once));
        }
        for (ValueId v : g.outputs())
            ++uses_[size_t(v)];
    }

    double run(RunProfile* profile) override
    {
        const Graph& g = m_.graph();
        IntraOpThreadsScope threads(threads_);
        const auto start = Clock::now();
        std::vector<at::Tensor> values(g.valueCount());
        for (const Value& v : g.values())
            if (v.isConstant())
                values[size_t(v.id)] = m_.constant(v.id);
        for (size_t i = 0; i < m_.inputIds().size(); ++i)
            values[size_t(m_.inputIds()[i])] = m_.inputs()[i];
        std::vector<int> left = uses_;
        if (profile) {
            profile->nodeSeconds.assign(g.nodeCount(), 0.0);
            profile->nodeThreads.assign(g.nodeCount(), threads_);
        }
        const bool record = profile && profile->recordTypes;
        if (record)
            profile->valueTypes.assign(g.valueCount(), std::nullopt);
        std::vector<at::Tensor> in, out;
        const bool timeNodes = profile || trial_.timing();
        int nodeThreads = threads_;
        for (NodeId id : m_.topology().order) {
            const Node& n = g.node(id);
            if (const int t = trial_.threadsFor(size_t(id)); t != nodeThreads) {
                nodeThreads = t;
                useIntraOpThreads(t);
            }
            in.clear();
            // A value's last reader gets the value itself rather than a second reference, so a
            // kernel may reuse a buffer nobody else holds (a convolution's summand, kernels_convolution).
            for (size_t i = 0; i < n.inputs.size(); ++i) {
                const ValueId v = n.inputs[i];
                if (v == kNone)
                    in.emplace_back();
                else if (left[size_t(v)] == 1 && readOnce_[size_t(id)][i])
                    in.push_back(std::move(values[size_t(v)]));
                else
                    in.push_back(values[size_t(v)]);
            }
            for (ValueId v : n.implicitInputs)  // outer values a control-flow body reads
                in.push_back(values[size_t(v)]);
            out.assign(n.outputs.size(), at::Tensor());
            const auto t0 = timeNodes ? Clock::now() : Clock::time_point();
            m_.runNode(id, in, out);
            if (timeNodes) {
                const double seconds = since(t0);
                if (profile) {
                    profile->nodeSeconds[size_t(id)] += seconds;
                    profile->nodeThreads[size_t(id)] = nodeThreads;
                }
                if (trial_.timing())
                    trial_.record(size_t(id), seconds);
            }
            for (size_t k = 0; k < n.outputs.size(); ++k)
                if (n.outputs[k] != kNone) {
                    values[size_t(n.outputs[k])] = out[k];
                    if (record && out[k].defined())
                        profile->valueTypes[size_t(n.outputs[k])] =
                            RunProfile::ValueType{dataTypeOf(out[k].scalar_type()), m_.sizesOf(n.outputs[k], out[k])};
                }
            for (ValueId v : reads_[size_t(id)])
                if (--left[size_t(v)] == 0)
                    values[size_t(v)] = at::Tensor();
            in.clear();  // the values handed over go now
        }
        std::vector<at::Tensor> outputs;
        for (ValueId v : g.outputs())
            outputs.push_back(values[size_t(v)]);
        m_.setOutputs(std::move(outputs));
        const double total = since(start);
        trial_.endRun();
        ++runs_;
        if (profile) {
            profile->totalSeconds = total;
            profile->workerBusy = {total};
            profile->workerWait = {0.0};
        }
        return total;
    }

    bool settled() const override { return runs_ >= kKernelTrialCalls && trial_.settled(); }

private:
    static std::vector<size_t> executionOrder(const TorchCompiledModel& m)
    {
        std::vector<size_t> order;
        for (NodeId id : m.topology().order)
            order.push_back(size_t(id));
        return order;
    }

    TorchCompiledModel& m_;
    int threads_;
    int runs_ = 0;
    NodeThreadTrial trial_;
    std::vector<int> uses_;
    std::vector<std::vector<ValueId>> reads_;  // per node, each value once
    std::vector<std::vector<bool>> readOnce_;  // per node and input
};

// A worker per cluster: the thread that calls run() is worker 0, the others are
// persistent threads woken once per run. Values cross clusters through one-shot
// slots (one per published instance, reset by a generation counter); every
// cluster runs in the schedule's global order, so a wait always ends.
class ParallelExecutor final : public Executor {
    enum class From { Nothing, Constant, Input, Local, Remote };
    struct Source {
        From from = From::Nothing;
        ValueId value = kNone;
        int input = 0;              // graph input index (From::Input)
        InstanceId producer = 0;    // From::Remote
        int output = 0;             // which output of the producer
    };
    struct Item {
        InstanceId instance;
        NodeId node;
        int copy;
        int threads;  // intra-op threads (hybrid schedules); 0: as they are
        bool publish;
        std::vector<Source> inputs;
        std::vector<size_t> release;  // local values (copy * values + id) last used here
        std::vector<bool> handOver;   // per input: a local value last used here and read once, moved in
    };
    struct Slot {
        std::mutex m;
        std::condition_variable cv;
        std::atomic<uint64_t> generation{0};  // == the run's generation when ready (set under m)
        std::vector<at::Tensor> outputs;
        int readers = 0;  // reads by other workers per run (+1 for a graph output: kept)
        int left = 0;     // reads still to come this run; at 0 the outputs are dropped
    };
    struct Worker {
        std::vector<Item> items;
        std::vector<at::Tensor> local;  // (copy, value) -> tensor
        double busy = 0, wait = 0;
        AllocationPattern pattern;  // its blocks' places, the same every run
        std::thread thread;
    };

public:
    ParallelExecutor(TorchCompiledModel& m, const Schedule& s)
        : m_(m), schedule_(s), threads_(s.workerThreads.begin(), s.workerThreads.end())
    {
        if (!s.threads.empty() && s.clusters.size() > 1)
            cores_ = std::make_unique<CoreTokens>(s.cores());
        // Workers of one thread each, no more than the cores: each has a core of its own,
        // so waiting longer by spinning takes none from another worker's intra-op threads.
        spinBetweenRuns_ = !cores_ && std::all_of(threads_.begin(), threads_.end(), [](int t) { return t <= 1; }) &&
                           s.clusters.size() <= std::max(1u, std::thread::hardware_concurrency());
        const Graph& g = m.graph();
        const Validation v = validate(s, m.topology());
        if (!v.valid)
            throw Error(ErrorKind::Internal, {}, "refusing an invalid schedule: " + v.problems.front());
        const size_t nInst = s.instanceCount();
        slots_ = std::vector<Slot>(nInst);
        std::vector<char> published(nInst, 0);

        std::vector<int> inputIndex(g.valueCount(), -1);
        for (size_t i = 0; i < m.inputIds().size(); ++i)
            inputIndex[size_t(m.inputIds()[i])] = int(i);

        workers_ = std::vector<Worker>(s.clusters.size());
        for (size_t c = 0; c < s.clusters.size(); ++c) {
            std::vector<char> local(nInst, 0);
            for (InstanceId i : s.clusters[c])
                local[size_t(i)] = 1;
            for (InstanceId i : s.clusters[c]) {
                const NodeId nid = s.node(i);
                const Node& n = g.node(nid);
                Item item{i, nid, s.copy(i), s.threads.empty() ? 0 : s.threads[size_t(i)], !s.isClone(c, i), {}, {}, {}};
                std::vector<ValueId> reads = n.inputs;  // then the outer values a control-flow body reads
                reads.insert(reads.end(), n.implicitInputs.begin(), n.implicitInputs.end());
                for (ValueId v : reads) {
                    Source src;
                    src.value = v;
                    if (v == kNone) {
                        src.from = From::Nothing;
                    } else if (g.value(v).isConstant()) {
                        src.from = From::Constant;
                    } else if (inputIndex[size_t(v)] >= 0) {
                        src.from = From::Input;
                        src.input = inputIndex[size_t(v)];
                    } else {
                        const NodeId p = g.value(v).producer;
                        const InstanceId pi = s.instance(p, s.copy(i));
                        const auto& outs = g.node(p).outputs;
                        src.output = int(std::find(outs.begin(), outs.end(), v) - outs.begin());
                        src.producer = pi;
                        if (local[size_t(pi)]) {
                            src.from = From::Local;
                        } else {
                            src.from = From::Remote;
                            published[size_t(pi)] = 1;
                            ++slots_[size_t(pi)].readers;
                        }
                    }
                    item.inputs.push_back(src);
                }
                workers_[c].items.push_back(std::move(item));
            }
        }
        // Graph outputs are collected from slots: their producers publish.
        for (ValueId v : g.outputs()) {
            const NodeId p = g.value(v).producer;
            if (p != kNone)
                for (int j = 0; j < s.degree; ++j) {
                    published[size_t(s.instance(p, j))] = 1;
                    ++slots_[size_t(s.instance(p, j))].readers;
                }
        }
        // Each local value is dropped after its last local use (or right after it is
        // made when nothing here reads it), as the serial executor does: memory stays
        // at the live set and the allocator hands back warm blocks.
        const size_t nv = g.valueCount();
        for (auto& w : workers_) {
            std::vector<int> lastUse(nv * size_t(s.degree), -1);
            for (size_t k = 0; k < w.items.size(); ++k) {
                const Item& item = w.items[k];
                for (const Source& src : item.inputs)
                    if (src.from == From::Local)
                        lastUse[size_t(item.copy) * nv + size_t(src.value)] = int(k);
                for (ValueId v : g.node(item.node).outputs)
                    if (v != kNone && lastUse[size_t(item.copy) * nv + size_t(v)] < 0)
                        lastUse[size_t(item.copy) * nv + size_t(v)] = int(k);
            }
            for (size_t key = 0; key < lastUse.size(); ++key)
                if (lastUse[key] >= 0)
                    w.items[size_t(lastUse[key])].release.push_back(key);
            // As in the serial executor: the last reader of a local value gets the value itself.
            for (Item& item : w.items)
                for (const Source& src : item.inputs) {
                    const size_t key = size_t(item.copy) * nv + size_t(src.value);
                    const bool local = src.from == From::Local;
                    item.handOver.push_back(
                        local && std::count(item.release.begin(), item.release.end(), key) == 1 &&
                        std::count_if(item.inputs.begin(), item.inputs.end(), [&](const Source& o) {
                            return o.from == From::Local && o.value == src.value;
                        }) == 1);
                }
        }
        for (auto& w : workers_)
            for (auto& item : w.items)
                item.publish = item.publish && published[size_t(item.instance)];
        // The thread that calls run() is worker 0; the others get threads of their own.
        for (size_t c = 1; c < workers_.size(); ++c)
            workers_[c].thread = std::thread([this, c] { workerLoop(c); });
    }

    ~ParallelExecutor() override
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            stop_ = true;
        }
        start_.notify_all();
        for (auto& w : workers_)
            if (w.thread.joinable())
                w.thread.join();
    }

    double run(RunProfile* profile) override
    {
        const Graph& g = m_.graph();
        if (m_.batch() != schedule_.batch)
            throw Error(ErrorKind::Usage, {}, "the schedule is for a batch of " + std::to_string(schedule_.batch) +
                                                  ", the inputs hold " + std::to_string(m_.batch()));
        // Sub-batch slices of every input, per copy.
        slices_.assign(size_t(schedule_.degree), {});
        for (size_t i = 0; i < m_.inputs().size(); ++i) {
            int64_t row = 0;
            for (int j = 0; j < schedule_.degree; ++j) {
                const int64_t rows = schedule_.subBatch[size_t(j)] * m_.sampleRows(i);
                slices_[size_t(j)].push_back(schedule_.degree == 1 ? m_.inputs()[i] : m_.inputs()[i].narrow(0, row, rows));
                row += rows;
            }
        }
        if (profile)
            profile->nodeSeconds.assign(g.nodeCount(), 0.0);
        profile_ = profile;
        const auto start = Clock::now();
        uint64_t gen;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            gen = ++generation_;
            settledRun_ = settled();
            failed_ = false;
            error_.reset();
            pending_ = int(workers_.size()) - 1;
        }
        if (workers_.size() > 1)
            start_.notify_all();
        {
            IntraOpThreadsScope callerThreads(threads_.empty() ? 1 : std::max(1, threads_[0]));  // restored after
            runWorker(0, gen);
        }
        // With a core a worker, the caller spins up to 2 ms for the last worker rather than
        // sleeping and being woken (0.1-0.2 ms on a cloud host's vCPUs).
        if (!spinBriefly([&] { return pending_.load() == 0; },
                         std::chrono::microseconds(spinBetweenRuns_ ? 2000 : 20))) {
            std::unique_lock<std::mutex> lock(m_mutex);
            done_.wait(lock, [&] { return pending_.load() == 0; });
        }
        if (failed_)
            throw *error_;

        std::vector<at::Tensor> outputs;
        for (ValueId v : g.outputs()) {
            const NodeId p = g.value(v).producer;
            std::vector<at::Tensor> parts;
            for (int j = 0; j < schedule_.degree; ++j) {
                if (p == kNone) {  // a constant, or a graph input passed through (not always the first)
                    const auto& ids = m_.inputIds();
                    const size_t input = size_t(std::find(ids.begin(), ids.end(), v) - ids.begin());
                    parts.push_back(g.value(v).isConstant() ? m_.constant(v) : slices_[size_t(j)][input]);
                    continue;
                }
                const auto& outs = g.node(p).outputs;
                parts.push_back(slots_[size_t(schedule_.instance(p, j))].outputs[size_t(std::find(outs.begin(), outs.end(), v) - outs.begin())]);
            }
            outputs.push_back(parts.size() == 1 ? parts[0]
                                                : withTorchErrors(ErrorKind::Runtime, m_.path(), [&] { return at::cat(parts, 0); }));
        }
        m_.setOutputs(std::move(outputs));
        const double total = since(start);
        ++runs_;
        if (profile) {
            profile->totalSeconds = total;
            profile->workerBusy.clear();
            profile->workerWait.clear();
            for (const auto& w : workers_) {
                profile->workerBusy.push_back(w.busy);
                profile->workerWait.push_back(w.wait);
            }
        }
        return total;
    }

    // Every node keeps its threads: only the kernels' own trials.
    bool settled() const override { return runs_ >= kKernelTrialCalls; }

private:
    void fail(const Error& e)
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            if (!failed_)
                error_ = std::make_unique<Error>(e);
            failed_ = true;
        }
        for (auto& slot : slots_) {  // wake every waiter; they see failed_
            std::lock_guard<std::mutex> lock(slot.m);
            slot.cv.notify_all();
        }
    }

    at::Tensor await(Worker& w, InstanceId producer, int output, uint64_t gen)
    {
        Slot& slot = slots_[size_t(producer)];
        auto ready = [&] { return slot.generation.load(std::memory_order_acquire) == gen || failed_.load(); };
        if (!ready()) {
            const auto t0 = Clock::now();
            if (!spinBriefly(ready)) {
                std::unique_lock<std::mutex> lock(slot.m);
                slot.cv.wait(lock, ready);
            }
            w.wait += since(t0);
        }
        std::unique_lock<std::mutex> lock(slot.m);
        if (slot.generation != gen)
            throw Error(ErrorKind::Runtime, m_.path(), "stopped");
        at::Tensor value = slot.outputs[size_t(output)];
        if (--slot.left == 0)
            slot.outputs.clear();  // every reader has it
        return value;
    }

    void runItems(size_t c, uint64_t gen)
    {
        Worker& w = workers_[c];
        const Graph& g = m_.graph();
        const size_t nv = g.valueCount();
        w.local.assign(nv * size_t(schedule_.degree), at::Tensor());
        w.busy = w.wait = 0;
        std::vector<at::Tensor> in, out;
        const int own = c < threads_.size() ? std::max(1, threads_[c]) : 1;
        int current = own;
        useIntraOpThreads(current);  // each run starts at the worker's own count
        for (const Item& item : w.items) {
            if (failed_)
                return;
            if (!cores_ && item.threads > 0 && item.threads != current)
                useIntraOpThreads(current = item.threads);
            in.clear();
            for (size_t i = 0; i < item.inputs.size(); ++i) {
                const Source& src = item.inputs[i];
                at::Tensor* local = src.from == From::Local ? &w.local[size_t(item.copy) * nv + size_t(src.value)] : nullptr;
                switch (src.from) {
                case From::Nothing: in.emplace_back(); break;
                case From::Constant: in.push_back(m_.constant(src.value)); break;
                case From::Input: in.push_back(slices_[size_t(item.copy)][size_t(src.input)]); break;
                case From::Local: in.push_back(item.handOver[i] ? std::move(*local) : *local); break;
                case From::Remote: in.push_back(await(w, src.producer, src.output, gen)); break;
                }
            }
            const Node& n = g.node(item.node);
            out.assign(n.outputs.size(), at::Tensor());
            int held = 0;  // core tokens, taken once the inputs are here: none is held while waiting for a value
            if (cores_) {
                const auto tw = Clock::now();
                held = cores_->acquire(item.threads > 0 ? item.threads : current);  // 0: as the worker has them now
                w.wait += since(tw);
                if (held != current)
                    useIntraOpThreads(current = held);
            }
            const auto t0 = Clock::now();
            try {
                m_.runNode(item.node, in, out);
            } catch (...) {
                if (held)
                    cores_->release(held);
                throw;
            }
            if (held)
                cores_->release(held);
            const double dt = since(t0);
            w.busy += dt;
            if (profile_) {
                std::lock_guard<std::mutex> lock(m_mutex);
                profile_->nodeSeconds[size_t(item.node)] += dt;
            }
            for (size_t k = 0; k < n.outputs.size(); ++k)
                if (n.outputs[k] != kNone)
                    w.local[size_t(item.copy) * nv + size_t(n.outputs[k])] = out[k];
            if (item.publish) {
                Slot& slot = slots_[size_t(item.instance)];
                {
                    std::lock_guard<std::mutex> lock(slot.m);
                    slot.outputs = out;
                    slot.left = slot.readers;
                    slot.generation.store(gen, std::memory_order_release);
                }
                slot.cv.notify_all();
            }
            for (size_t key : item.release)
                w.local[key] = at::Tensor();
            in.clear();
            out.clear();
        }
    }

    // One run of worker c's items; a failure stops every worker and is rethrown by run().
    void runWorker(size_t c, uint64_t gen)
    {
        const AllocationPattern::Run pattern(workers_[c].pattern, settledRun_);  // writes into memory its own core held last
        try {
            try {
                runItems(c, gen);
            } catch (...) {
                rethrowAsError(ErrorKind::Runtime, m_.path(), {});
            }
        } catch (const Error& e) {
            fail(e);
        }
        workers_[c].local.clear();
    }

    void workerLoop(size_t c)
    {
        uint64_t seen = 0;
        while (true) {
            uint64_t gen;
            if (spinBetweenRuns_)  // runs back to back start without a wake-up
                spinBriefly([&] { return generation_.load() != seen || stop_.load(); },
                            std::chrono::microseconds(500));
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                start_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_)
                    return;
                gen = seen = generation_;
            }
            runWorker(c, gen);
            {
                std::lock_guard<std::mutex> lock(m_mutex);
                --pending_;
            }
            done_.notify_all();
        }
    }

    TorchCompiledModel& m_;
    Schedule schedule_;
    std::vector<int> threads_;  // the schedule's workerThreads
    std::unique_ptr<CoreTokens> cores_;  // when items choose their own thread counts
    std::vector<Slot> slots_;
    std::vector<Worker> workers_;
    std::vector<std::vector<at::Tensor>> slices_;  // [copy][input]
    RunProfile* profile_ = nullptr;

    std::mutex m_mutex;
    std::condition_variable start_, done_;
    std::atomic<uint64_t> generation_{0};  // changed under m_mutex; atomic for workers spinning between runs
    int runs_ = 0;  // completed
    bool settledRun_ = false;  // this run's settled(), for the workers (set under m_mutex)
    std::atomic<int> pending_{0};  // worker threads still in this run (changed under m_mutex)
    bool spinBetweenRuns_ = false;
    std::atomic<bool> stop_{false};  // as generation_
    std::atomic<bool> failed_{false};
    std::unique_ptr<Error> error_;  // the first failure of this run
};

}  // namespace

std::unique_ptr<Executor> makeSerialExecutor(TorchCompiledModel& model, int intraOpThreads)
{
    return std::make_unique<SerialExecutor>(model, intraOpThreads);
}

std::unique_ptr<Executor> makeParallelExecutor(TorchCompiledModel& model, const Schedule& schedule)
{
    return std::make_unique<ParallelExecutor>(model, schedule);
}

}  // namespace ramiel
