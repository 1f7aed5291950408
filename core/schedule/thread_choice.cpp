#include "core/schedule/thread_choice.h"

#include <algorithm>
#include <limits>

namespace ramiel {

std::vector<int> chooseThreads(const std::vector<ThreadChoiceItem>& items, const CostTable& costs, int startThreads)
{
    constexpr double kNever = std::numeric_limits<double>::infinity();
    int most = std::max(1, startThreads);
    for (const ThreadChoiceItem& it : items)
        most = std::max(most, it.most);
    const auto counts = size_t(most) + 1;  // index = thread count; 0 unused
    // total[t]: least time of the items so far, the last on t threads;
    // from[i][t]: the count item i-1 had on that path.
    std::vector<double> total(counts, kNever), next(counts);
    total[size_t(std::max(1, startThreads))] = 0;
    std::vector<std::vector<int>> from(items.size(), std::vector<int>(counts, 0));
    for (size_t i = 0; i < items.size(); ++i) {
        const ThreadChoiceItem& it = items[i];
        size_t cheapest = 1;
        for (size_t u = 1; u < counts; ++u)
            if (total[u] < total[cheapest])
                cheapest = u;
        const double switchCost = costs.threadSwitch(it.node, it.samples);
        std::fill(next.begin(), next.end(), kNever);
        for (size_t t = 1; t <= size_t(std::max(1, it.most)); ++t) {
            const bool stay = total[t] <= total[cheapest] + switchCost;
            next[t] = costs.node(it.node, it.samples, int(t)) + (stay ? total[t] : total[cheapest] + switchCost);
            from[i][t] = int(stay ? t : cheapest);
        }
        total.swap(next);
    }
    std::vector<int> chosen(items.size(), 1);
    if (items.empty())
        return chosen;
    size_t t = 1;
    for (size_t u = 1; u < counts; ++u)
        if (total[u] < total[t])
            t = u;
    for (size_t i = items.size(); i-- > 0;) {
        chosen[i] = int(t);
        t = size_t(from[i][t]);
    }
    return chosen;
}

}  // namespace ramiel
