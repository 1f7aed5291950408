// Simulates a schedule on P cores with the cost table: each worker runs its
// cluster's items in order; an item starts when its worker is free and every
// input is there (a predecessor in another cluster arrives at its finish time
// plus the edge cost). An item on another thread count than the item before it
// on its worker pays CostTable::threadSwitch. Items are processed in rank order, which is a valid
// event order because every cluster follows the same global order.
#pragma once

#include "core/schedule/schedule.h"

#include <vector>

namespace ramiel {

struct GanttEntry {
    InstanceId instance = 0;
    int32_t worker = 0;
    double start = 0;
    double end = 0;
    bool clone = false;
};

struct Simulation {
    double makespan = 0;
    double serial = 0;   // the whole batch on one core, one copy, no hand-offs
    double speedup = 0;  // serial / makespan
    std::vector<double> busy;   // per cluster: seconds computing
    std::vector<double> wait;   // per cluster: seconds idle before its last item ends
    std::vector<double> start;  // per cluster: first item's start
    std::vector<double> end;    // per cluster: last item's end
    std::vector<GanttEntry> gantt;  // filled when asked for, in rank order
};

// Serial time of the whole batch: the sum of every node's cost at B samples.
double serialSeconds(const CostTable& costs, int batch);

Simulation simulate(const Schedule& s, const CostTable& costs, bool withGantt = false);

// The makespan alone, without allocating a report.
double simulateMakespan(const Schedule& s, const CostTable& costs);

// For search loops that only move instances between clusters (merging,
// hypercluster swaps): instance costs, edge costs and the rank order are
// computed once, and each call reads only `owner`. No clones allowed; items
// without a count of their own run on one thread.
class OwnerSimulator {
public:
    OwnerSimulator(const Schedule& shape, const CostTable& costs);
    // `start`/`end`, when given, receive each cluster's first start and last end.
    double makespan(const std::vector<int32_t>& owner, size_t clusterCount, std::vector<double>* start = nullptr,
                    std::vector<double>* end = nullptr) const;

private:
    std::vector<InstanceId> byRank_;
    std::vector<double> cost_;
    std::vector<size_t> predStart_;  // CSR over instances
    std::vector<InstanceId> pred_;
    std::vector<double> edge_;
    std::vector<int> threads_;     // by instance, when any item has more than one thread; else empty
    std::vector<double> switch_;   // by instance, with threads_: CostTable::threadSwitch
    mutable std::vector<double> finish_, free_;
    mutable std::vector<int> last_;
};

}  // namespace ramiel
