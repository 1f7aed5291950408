#include "core/analysis/grouping.h"

#include <algorithm>
#include <map>

namespace ramiel {

std::vector<std::string> modulePrefixes(const std::string& nodeName)
{
    std::vector<std::string> out;
    // Every '/' after the first character ends a module; the text after the last is the node's own name.
    for (size_t slash = nodeName.find('/', 1); slash != std::string::npos; slash = nodeName.find('/', slash + 1))
        if (slash + 1 < nodeName.size() && nodeName[slash - 1] != '/')
            out.push_back(nodeName.substr(0, slash + 1));
    return out;
}

NodeGroups groupByModules(const Graph& graph, const std::vector<std::string>& collapsed)
{
    NodeGroups g;
    g.groupOf.assign(graph.nodeCount(), -1);
    if (collapsed.empty())
        return g;
    const std::vector<std::string> wanted = [&] {
        std::vector<std::string> w = collapsed;
        std::sort(w.begin(), w.end());
        return w;
    }();
    std::map<std::string, int> index;
    for (const Node& n : graph.nodes()) {
        // The outermost collapsed module around the node.
        for (const std::string& prefix : modulePrefixes(n.name)) {
            if (!std::binary_search(wanted.begin(), wanted.end(), prefix))
                continue;
            auto [it, added] = index.emplace(prefix, int(g.prefixes.size()));
            if (added) {
                g.prefixes.push_back(prefix);
                g.members.emplace_back();
            }
            g.groupOf[size_t(n.id)] = it->second;
            g.members[size_t(it->second)].push_back(n.id);
            break;
        }
    }
    return g;
}

std::vector<std::string> modulesAtDepth(const Graph& graph, int depth)
{
    std::vector<std::string> order;
    std::map<std::string, int> counts;
    for (const Node& n : graph.nodes()) {
        const std::vector<std::string> prefixes = modulePrefixes(n.name);
        if (depth < 1 || size_t(depth) > prefixes.size())
            continue;
        const std::string& p = prefixes[size_t(depth - 1)];
        if (counts[p]++ == 0)
            order.push_back(p);
    }
    order.erase(std::remove_if(order.begin(), order.end(), [&](const std::string& p) { return counts[p] < 2; }),
                order.end());
    return order;
}

}  // namespace ramiel
