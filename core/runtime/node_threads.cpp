#include "core/runtime/node_threads.h"

#include "core/runtime/runtime.h"
#include "core/util/environment.h"

#include <algorithm>
#include <limits>

namespace ramiel {

namespace {

// Candidates: nodes at most this long on all threads. Longer ones gain from the
// second core; and a stretch of one-thread nodes longer than the idle threads'
// spin (KMP_BLOCKTIME; GOMP_SPINCOUNT with libgomp: docs/runtime.md) puts them to
// sleep, which the next node on all threads pays for waking them.
constexpr double kSmallNodeSeconds = 50e-6;

constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace

NodeThreadsChoice nodeThreadsChoice()
{
    return NodeThreadsChoice(environmentChoice("RAMIEL_NODE_THREADS", {"measured", "all"}));
}

NodeThreadTrial::NodeThreadTrial(std::vector<size_t> order, int threads, NodeThreadsChoice choice)
    : order_(std::move(order)),
      threads_(threads),
      decided_(threads <= 1 || choice == NodeThreadsChoice::All)
{
    size_t nodes = 0;
    for (size_t i : order_)
        nodes = std::max(nodes, i + 1);
    candidate_.assign(nodes, false);
    single_.assign(nodes, false);
    oneThreadCalls_.assign(nodes, 0);
    bestAll_.assign(nodes, kNever);
    bestInOneRuns_.assign(nodes, kNever);
    bestDecided_.assign(nodes, kNever);
    bestWholeOnOne_.assign(nodes, kNever);
}

NodeThreadTrial::Phase NodeThreadTrial::phase() const
{
    return Phase(std::min(run_ / kKernelTrialCalls, int(Phase::WholeRun)));
}

// After the first phase, even runs put nodes on one thread: the candidates, then all.
bool NodeThreadTrial::oneThreadRun() const
{
    return phase() != Phase::Kernels && (run_ - kKernelTrialCalls * int(phase())) % 2 == 0;
}

int NodeThreadTrial::threadsFor(size_t i) const
{
    if (decided_)
        return single_[i] ? 1 : threads_;
    switch (phase()) {
    case Phase::Kernels:
        return threads_;
    case Phase::Stretches:
        return candidate_[i] && oneThreadRun() ? 1 : threads_;
    case Phase::WholeRun:
        return single_[i] || oneThreadRun() ? 1 : threads_;
    }
    return threads_;
}

void NodeThreadTrial::record(size_t i, double seconds)
{
    // Each phase's first run of each kind is untimed: it makes primitives and fills caches.
    if (run_ - kKernelTrialCalls * int(phase()) < 2)
        return;
    const bool one = oneThreadRun();
    double& best = phase() == Phase::WholeRun ? (one ? bestWholeOnOne_[i] : bestDecided_[i])
                                              : (one ? bestInOneRuns_[i] : bestAll_[i]);
    best = std::min(best, seconds);
}

void NodeThreadTrial::endRun()
{
    if (settled())
        return;
    if (decided_) {
        ++run_;
        return;
    }
    for (size_t i : order_)
        oneThreadCalls_[i] += threadsFor(i) == 1;
    ++run_;
    if (run_ == kKernelTrialCalls) {
        bool any = false;
        for (size_t i = 0; i < candidate_.size(); ++i) {
            candidate_[i] = bestAll_[i] <= kSmallNodeSeconds;
            any = any || candidate_[i];
        }
        if (!any)
            endTrial();
    } else if (run_ == 2 * kKernelTrialCalls) {
        decide();
        if (oneThreadNodes() == order_.size())  // nothing else to compare with
            endTrial();
    } else if (run_ == 3 * kKernelTrialCalls) {
        double asDecided = 0, wholeOnOne = 0;
        for (size_t i : order_) {
            asDecided += bestDecided_[i];
            wholeOnOne += bestWholeOnOne_[i];
        }
        if (wholeOnOne < asDecided)
            for (size_t i : order_)
                single_[i] = true;
        endTrial();
    }
}

// The choices are made; settled() once every node on one thread has run there in
// kKernelTrialCalls runs (at most half as many more runs: a stretch moved after the
// second phase ran on one thread in its every other run, the others in the third's).
void NodeThreadTrial::endTrial()
{
    decided_ = true;
    int fewest = kKernelTrialCalls;
    for (size_t i : order_)
        if (single_[i])
            fewest = std::min(fewest, oneThreadCalls_[i]);
    settledAt_ = run_ + kKernelTrialCalls - fewest;
}

// Stretch by stretch of consecutive candidates: all of them on one thread where, in
// the runs that put them there, they and the node after them took less time than in
// the runs on all threads. Only those two configurations were measured: a node left
// on all threads inside a stretch would wake the sleeping threads itself.
void NodeThreadTrial::decide()
{
    std::vector<size_t> stretch;
    auto close = [&](double loss) {
        double gain = 0;
        for (size_t i : stretch)
            gain += bestAll_[i] - bestInOneRuns_[i];
        if (gain > loss)
            for (size_t i : stretch)
                single_[i] = true;
        stretch.clear();
    };
    for (size_t i : order_) {
        if (candidate_[i]) {
            stretch.push_back(i);
        } else if (!stretch.empty()) {
            const bool timed = bestInOneRuns_[i] < kNever && bestAll_[i] < kNever;
            close(timed ? bestInOneRuns_[i] - bestAll_[i] : 0.0);
        }
    }
    close(0.0);
}

size_t NodeThreadTrial::oneThreadNodes() const
{
    return size_t(std::count(single_.begin(), single_.end(), true));
}

}  // namespace ramiel
