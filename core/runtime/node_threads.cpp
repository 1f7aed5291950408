#include "core/runtime/node_threads.h"

#include "core/runtime/runtime.h"
#include "core/util/environment.h"

#include <algorithm>
#include <limits>

namespace ramiel {

namespace {

// Candidates: nodes at most this long on all threads. Longer ones gain from the
// second core; and a stretch of one-thread nodes longer than the idle threads'
// spin (GOMP_SPINCOUNT, docs/runtime.md) puts them to sleep, which the next node
// on all threads pays for waking them.
constexpr double kSmallNodeSeconds = 50e-6;

constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace

NodeThreadsChoice nodeThreadsChoice()
{
    return NodeThreadsChoice(environmentChoice("RAMIEL_NODE_THREADS", {"measured", "all"}));
}

NodeThreadTrial::NodeThreadTrial(size_t nodes, int threads, NodeThreadsChoice choice)
    : threads_(threads),
      settled_(threads <= 1 || choice == NodeThreadsChoice::All),
      candidate_(nodes, false),
      single_(nodes, false),
      bestAll_(nodes, kNever),
      bestOne_(nodes, kNever)
{
}

int NodeThreadTrial::threadsFor(size_t i) const
{
    if (settled_)
        return single_[i] ? 1 : threads_;
    // In the second phase, even runs put the candidates on one thread.
    const bool oneThreadRun = run_ >= kKernelTrialCalls && (run_ - kKernelTrialCalls) % 2 == 0;
    return candidate_[i] && oneThreadRun ? 1 : threads_;
}

void NodeThreadTrial::record(size_t i, double seconds)
{
    // The first runs of each count are untimed: they make primitives and fill caches.
    if (run_ < 2)
        return;
    const bool one = threadsFor(i) == 1;
    if (one && run_ - kKernelTrialCalls < 2)
        return;
    double& best = one ? bestOne_[i] : bestAll_[i];
    best = std::min(best, seconds);
}

void NodeThreadTrial::endRun()
{
    if (settled_)
        return;
    ++run_;
    if (run_ == kKernelTrialCalls) {
        bool any = false;
        for (size_t i = 0; i < candidate_.size(); ++i) {
            candidate_[i] = bestAll_[i] <= kSmallNodeSeconds;
            any = any || candidate_[i];
        }
        settled_ = !any;
    } else if (run_ == 2 * kKernelTrialCalls) {
        for (size_t i = 0; i < single_.size(); ++i)
            single_[i] = candidate_[i] && bestOne_[i] < bestAll_[i];
        settled_ = true;
    }
}

size_t NodeThreadTrial::oneThreadNodes() const
{
    return size_t(std::count(single_.begin(), single_.end(), true));
}

}  // namespace ramiel
