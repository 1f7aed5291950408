// How many intra-op threads each node of a serial run on P > 1 threads uses: P, or
// one where one thread is faster for it in place. On two cores whose caches are far
// apart (a round trip of a cache line between them took 430-560 ns on one host), a
// small node loses more to handing its input and output between the cores than it
// gains from the second one: shufflenet_v2_x0_5's 7x7 1x1 convolutions took 10-11 us
// on one thread and 17-18 on two (docs/runtime.md).
//
// Measured, not predicted: the executor's first kKernelTrialCalls runs settle the
// kernels' own choices on P threads and time every node; nodes that took at most
// kSmallNodeSeconds are the candidates. The next kKernelTrialCalls runs put all
// candidates on one thread in every other run, so each is timed where its
// neighbours are on one thread as well (as a stretch of small nodes will run);
// after each count's first run, the lowest times decide, for each stretch of
// candidates that run one after another as a whole: it moves to one thread where,
// with the node after it (which may have to wake the threads that slept meanwhile,
// and reads what one core wrote), it took less time in the runs that put it there.
// Where that leaves any node on P threads, the last kKernelTrialCalls runs time
// every node both so and with all of them on one thread, in turns: the lower sum
// of each node's lowest time decides, so a run on P threads is no slower than on
// one where one thread is measured faster in place (the trial's per-node times
// before miss what a node on P threads costs the one-thread nodes around it: a
// spinning or waking thread, data in the other core's cache).
// RAMIEL_NODE_THREADS=all in the environment keeps every node on P threads (for
// comparisons); =measured is the default; any other value is an Error(Usage).
#pragma once

#include <cstddef>
#include <vector>

namespace ramiel {

enum class NodeThreadsChoice { Measured, All };
NodeThreadsChoice nodeThreadsChoice();

class NodeThreadTrial {
public:
    // `order`: the node indices in execution order; `threads`: the run's intra-op threads.
    NodeThreadTrial(std::vector<size_t> order, int threads, NodeThreadsChoice choice);

    // Whether this run times its nodes (record() for each).
    bool timing() const { return !decided_; }
    // Whether, besides, the kernels of the nodes the trial put on one thread at its end
    // have had kKernelTrialCalls calls there (they ran on one thread in only some of its
    // runs): a few runs after the decision.
    bool settled() const { return decided_ && run_ >= settledAt_; }
    // The threads node i runs with in this run.
    int threadsFor(size_t i) const;
    void record(size_t i, double seconds);
    // After every run.
    void endRun();

    // Nodes that run on one thread once settled.
    size_t oneThreadNodes() const;

private:
    // kKernelTrialCalls runs each: the kernels' own trials on all threads; the candidates
    // on one thread in every other run; every node on one thread in every other run.
    enum class Phase { Kernels, Stretches, WholeRun };
    Phase phase() const;
    bool oneThreadRun() const;
    void decide();
    void endTrial();

    std::vector<size_t> order_;
    int threads_;
    int run_ = 0;
    bool decided_;  // every choice made: no more timing
    int settledAt_ = 0;
    std::vector<int> oneThreadCalls_;  // per node, the trial's runs that put it on one thread
    std::vector<bool> candidate_, single_;
    // Lowest times: in runs with every node on all threads, and in the runs that put the
    // candidates on one thread (a candidate's on one thread, another node's beside them).
    std::vector<double> bestAll_, bestInOneRuns_;
    // Lowest times in the last phase: as decided, and with every node on one thread.
    std::vector<double> bestDecided_, bestWholeOnOne_;
};

}  // namespace ramiel
