// Node and edge costs for scheduling, at any sub-batch size.
//
// A model describes one sample (its batch as exported, usually 1). A node
// processing a sub-batch of b samples costs
//   static:   overhead + max(b·flops / F, (constantBytes + b·activationBytes) / β)
//   measured: the measured seconds scaled linearly from the measured batch
// and an edge u->v that crosses clusters costs c = latency + b·bytes(u->v) / β.
#pragma once

#include "core/analysis/cost_model.h"
#include "core/ir/topology.h"

#include <algorithm>
#include <string>
#include <vector>

namespace ramiel {

struct EdgeCostParameters {
    double latencySeconds = 20e-6;  // hand-off between threads: publish + wake-up
    double bytesPerSecond = 10e9;   // usually the machine's copy bandwidth
};

class CostTable {
public:
    // From the static cost model. Nodes of unknown cost count only the overhead.
    static CostTable fromStatic(const Graph& graph, const Topology& topo, const std::vector<NodeCost>& costs,
                                const MachineConstants& machine, const EdgeCostParameters& edges);
    // From a measured table (JSON written by `ramiel profile`, schema in
    // docs/scheduling.md): {"batch": b, "nodes": {"name": seconds, ...}}, and
    // optionally "threaded": {"threads": k, "nodes": {...}} at k intra-op
    // threads. Nodes the table lacks keep their static cost and are listed in `missing`.
    // Throws Error(Io) / Error(Usage).
    static CostTable fromMeasured(const std::string& path, const Graph& graph, const Topology& topo,
                                  const CostTable& fallback, std::vector<std::string>* missing = nullptr);

    // Measured seconds by node id at `batch` samples (NaN: keep the fallback's cost).
    // `untimedSeconds`: the part of a whole run that no node's timer saw (the
    // executor's bookkeeping, freeing values), per node; each measured node pays it.
    static CostTable fromMeasuredSeconds(const std::vector<double>& seconds, int batch, const CostTable& fallback,
                                         const std::string& source, double untimedSeconds = 0);

    // Explicit seconds per sample for every node (hand-made and synthetic
    // graphs); every edge carries `edgeBytes` bytes per sample.
    static CostTable fromSeconds(const Topology& topo, const std::vector<double>& secondsPerSample,
                                 const EdgeCostParameters& edges, double edgeBytes = 0);

    size_t nodeCount() const { return perSample_.size(); }
    double node(NodeId n, int samples) const
    {
        const size_t i = static_cast<size_t>(n);
        const double b = samples;
        const double roofline = std::max(b * flopSeconds_[i], constSeconds_[i] + b * actSeconds_[i]);
        return fixed_[i] + roofline + b * perSample_[i];
    }
    // The node on `threads` intra-op threads: its measured cost at that count
    // (setThreadedSeconds); between or beyond measured counts, Amdahl's law
    // fitted to the one-thread cost and the nearest measured count (a node
    // that slows down with threads keeps slowing, up to the fitted limit);
    // with no count measured, the one-thread cost: no speedup is assumed.
    double node(NodeId n, int samples, int threads) const;
    // Measured seconds per node id on `threads` intra-op threads at `batch`
    // samples (NaN: not measured), scaled per sample like the one-thread table.
    // Each count is kept; setting a count again replaces it. `untimedSeconds` as
    // for fromMeasuredSeconds, on that count.
    void setThreadedSeconds(int threads, const std::vector<double>& seconds, int batch, double untimedSeconds = 0);
    // The same for some nodes only (NaN: keep the node's cost at that count).
    void updateThreadedSeconds(int threads, const std::vector<double>& seconds, int batch);
    // The untimed seconds per node given with the costs at `threads` (0 when none were).
    double untimedSeconds(int threads) const;
    // The largest intra-op thread count with measured costs, 0 when there is none.
    int threadedCount() const { return threaded_.empty() ? 0 : threaded_.back().threads; }
    // Every measured count above one, ascending.
    std::vector<int> threadedCounts() const;
    // Whether the cost at `threads` is measured rather than fitted.
    bool measuredAt(int threads) const;

    // Edge cost for the k-th predecessor of `to` (topo.preds[to][k]).
    double predEdge(NodeId to, size_t k, int samples) const
    {
        return edges_.latencySeconds + samples * predBytes_[static_cast<size_t>(to)][k] / edges_.bytesPerSecond;
    }
    double edge(NodeId from, NodeId to, int samples) const;
    // What `to` pays when its worker ran the item before it on another
    // intra-op thread count: the sleeping threads wake (the hand-off latency)
    // and its inputs, written by the other count's cores, move between caches
    // (their bytes over the bandwidth), as for a value crossing clusters.
    double threadSwitch(NodeId to, int samples) const;
    double edgeBytes(NodeId to, size_t k) const { return predBytes_[static_cast<size_t>(to)][k]; }

    const Topology& topology() const { return *topo_; }
    const std::string& source() const { return source_; }
    const EdgeCostParameters& edgeParameters() const { return edges_; }

private:
    const Topology* topo_ = nullptr;
    std::string source_;
    EdgeCostParameters edges_;
    // Static form: seconds(b) = fixed + max(b·flopSeconds, constSeconds + b·actSeconds);
    // measured form: seconds(b) = b·perSample (fixed, const and act zero).
    std::vector<double> fixed_, flopSeconds_, constSeconds_, actSeconds_, perSample_;
    std::vector<std::vector<double>> predBytes_;  // bytes per sample, aligned with topo.preds
    double untimed_ = 0;  // on one thread, already in fixed_ of the measured nodes
    struct Threaded {
        int threads;
        std::vector<double> perSample;  // -1: unknown
        double untimed = 0;             // per node, beside perSample
    };
    std::vector<Threaded> threaded_;  // ascending thread counts
};

}  // namespace ramiel
