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
// after each count's first run, the lowest time decides.
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
    // Nodes indexed 0..nodes-1; `threads`: the run's intra-op threads.
    NodeThreadTrial(size_t nodes, int threads, NodeThreadsChoice choice);

    // Whether this run times its nodes (record() for each).
    bool timing() const { return !settled_; }
    // The threads node i runs with in this run.
    int threadsFor(size_t i) const;
    void record(size_t i, double seconds);
    // After every run.
    void endRun();

    // Nodes that run on one thread once settled.
    size_t oneThreadNodes() const;

private:
    int threads_;
    int run_ = 0;
    bool settled_;
    std::vector<bool> candidate_, single_;
    std::vector<double> bestAll_, bestOne_;
};

}  // namespace ramiel
