#include "core/ir/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace ramiel {

SyntheticDag randomDag(int nodes, uint64_t seed, int width, int maxFanIn)
{
    std::mt19937_64 rng(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    SyntheticDag d;
    std::vector<std::vector<ValueId>> layers;
    int made = 0;
    while (made < nodes) {
        const int count = std::min(nodes - made, uniform(1, std::max(1, width)));
        std::vector<ValueId> layer;
        for (int i = 0; i < count; ++i, ++made) {
            Node n;
            n.opType = "Op";
            n.name = "n" + std::to_string(made);
            if (!layers.empty()) {
                const int fanIn = uniform(1, std::max(1, maxFanIn));
                for (int k = 0; k < fanIn; ++k) {
                    // Mostly the previous layer, sometimes further back.
                    const int back = uniform(0, 3) == 0 ? uniform(1, int(layers.size())) : 1;
                    const auto& from = layers[layers.size() - size_t(back)];
                    const ValueId v = from[size_t(uniform(0, int(from.size()) - 1))];
                    if (std::find(n.inputs.begin(), n.inputs.end(), v) == n.inputs.end())
                        n.inputs.push_back(v);
                }
            }
            const ValueId out = d.graph.addValue(n.name + ".out");
            n.outputs.push_back(out);
            d.graph.addNode(std::move(n));
            layer.push_back(out);
            d.seconds.push_back(1e-6 * std::pow(1000.0, std::uniform_real_distribution<double>(0, 1)(rng)));
        }
        layers.push_back(std::move(layer));
    }
    return d;
}

}  // namespace ramiel
