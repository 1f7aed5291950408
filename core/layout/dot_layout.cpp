#include "core/layout/dot_layout.h"

#include "core/util/error.h"

#include <graphviz/cgraph.h>
#include <graphviz/graphviz_version.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>

namespace ramiel {
namespace {

std::mutex& graphvizMutex()
{
    static std::mutex m;
    return m;
}

// dot works in points (1/72 inch) with y up; sizes are given in inches.
constexpr double kPointsPerInch = 72.0;

void setAttribute(void* object, const char* name, const std::string& value)
{
    agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

// A long edge left out of dot: an arc from the source's far side to the
// target's near side, bowed sideways so it does not run through the boxes between.
LayoutEdge arc(const LayoutInput& input, const Layout& layout, int from, int to)
{
    const LayoutPoint a = layout.centers[size_t(from)], b = layout.centers[size_t(to)];
    const auto [aw, ah] = input.nodeSizes[size_t(from)];
    const auto [bw, bh] = input.nodeSizes[size_t(to)];
    LayoutEdge e;
    e.routedByDot = false;
    e.hasArrow = true;
    constexpr double kArrow = 7;
    if (!input.leftToRight) {
        const LayoutPoint p0{a.x, a.y + ah / 2}, p3{b.x, b.y - bh / 2 - kArrow};
        const double dy = p3.y - p0.y;
        const double side = (b.x >= a.x ? 1 : -1) * std::min(220.0, 30 + 0.08 * std::abs(dy));
        e.spline = {p0, {p0.x + side, p0.y + 0.25 * dy}, {p3.x + side, p3.y - 0.25 * dy}, p3};
        e.arrowTip = {b.x, b.y - bh / 2};
    } else {
        const LayoutPoint p0{a.x + aw / 2, a.y}, p3{b.x - bw / 2 - kArrow, b.y};
        const double dx = p3.x - p0.x;
        const double side = (b.y >= a.y ? 1 : -1) * std::min(220.0, 30 + 0.08 * std::abs(dx));
        e.spline = {p0, {p0.x + 0.25 * dx, p0.y + side}, {p3.x - 0.25 * dx, p3.y + side}, p3};
        e.arrowTip = {b.x - bw / 2, b.y};
    }
    return e;
}

}  // namespace

std::string graphvizVersion()
{
    // The loaded library's own version (gvcVersion), not the header's PACKAGE_VERSION.
    static const std::string version = [] {
        std::lock_guard<std::mutex> lock(graphvizMutex());
        std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContext(), gvFreeContext);
        const char* v = gvc ? gvcVersion(gvc.get()) : nullptr;
        return std::string(v ? v : PACKAGE_VERSION);
    }();
    return version;
}

std::vector<bool> edgesForDot(const LayoutInput& input)
{
    const size_t n = input.nodeSizes.size();
    std::vector<bool> keep(input.edges.size(), true);
    // Topological order (Kahn); a cycle keeps every edge (dot copes with those).
    std::vector<std::vector<int>> succ(n), pred(n);
    std::vector<int> indegree(n, 0), order;
    for (const auto& [from, to] : input.edges) {
        if (from < 0 || to < 0 || size_t(from) >= n || size_t(to) >= n)
            return keep;
        succ[size_t(from)].push_back(to);
        pred[size_t(to)].push_back(from);
        ++indegree[size_t(to)];
    }
    for (size_t v = 0; v < n; ++v)
        if (indegree[v] == 0)
            order.push_back(int(v));
    for (size_t k = 0; k < order.size(); ++k)
        for (int s : succ[size_t(order[k])])
            if (--indegree[size_t(s)] == 0)
                order.push_back(s);
    if (order.size() != n)
        return keep;
    // Two feasible rankings, as early and as late as possible; dot's is at
    // least as compact as the better of them.
    std::vector<int> asap(n, 0), alap(n, 0);
    int depth = 0;
    for (int v : order) {
        for (int p : pred[size_t(v)])
            asap[size_t(v)] = std::max(asap[size_t(v)], asap[size_t(p)] + 1);
        depth = std::max(depth, asap[size_t(v)]);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        int r = depth;
        for (int s : succ[size_t(*it)])
            r = std::min(r, alap[size_t(s)] - 1);
        alap[size_t(*it)] = r;
    }
    auto crossings = [&](const std::vector<int>& rank) {
        long total = 0;
        for (const auto& [from, to] : input.edges)
            total += std::max(0, rank[size_t(to)] - rank[size_t(from)] - 1);
        return total;
    };
    const long early = crossings(asap), late = crossings(alap);
    const std::vector<int>& rank = early <= late ? asap : alap;
    long total = std::min(early, late);
    if (total <= input.maxRankCrossings)
        return keep;
    std::vector<size_t> byLength(input.edges.size());
    for (size_t i = 0; i < byLength.size(); ++i)
        byLength[i] = i;
    auto span = [&](size_t i) { return rank[size_t(input.edges[i].second)] - rank[size_t(input.edges[i].first)]; };
    std::stable_sort(byLength.begin(), byLength.end(), [&](size_t a, size_t b) { return span(a) > span(b); });
    for (size_t i : byLength) {
        if (total <= input.maxRankCrossings)
            break;
        total -= std::max(0, span(i) - 1);
        keep[i] = false;
    }
    return keep;
}

Layout layoutWithDot(const LayoutInput& input)
{
    std::lock_guard<std::mutex> lock(graphvizMutex());

    std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContext(), gvFreeContext);
    if (!gvc)
        throw Error(ErrorKind::Internal, "", "Graphviz: could not create a context");
    Agraph_t* g = agopen(const_cast<char*>("g"), Agdirected, nullptr);
    if (!g)
        throw Error(ErrorKind::Internal, "", "Graphviz: could not create a graph");
    std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(g, agclose);

    setAttribute(g, "rankdir", input.leftToRight ? "LR" : "TB");
    setAttribute(g, "nodesep", std::to_string(input.nodeSeparation / kPointsPerInch));
    setAttribute(g, "ranksep", std::to_string(input.rankSeparation / kPointsPerInch));
    setAttribute(g, "splines", "spline");
    agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(g, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    agattr(g, AGNODE, const_cast<char*>("width"), const_cast<char*>("1"));
    agattr(g, AGNODE, const_cast<char*>("height"), const_cast<char*>("0.5"));

    std::vector<Agnode_t*> nodes;
    nodes.reserve(input.nodeSizes.size());
    for (size_t i = 0; i < input.nodeSizes.size(); ++i) {
        const std::string name = "n" + std::to_string(i);
        Agnode_t* n = agnode(g, const_cast<char*>(name.c_str()), 1);
        setAttribute(n, "width", std::to_string(input.nodeSizes[i].first / kPointsPerInch));
        setAttribute(n, "height", std::to_string(input.nodeSizes[i].second / kPointsPerInch));
        nodes.push_back(n);
    }
    const std::vector<bool> forDot = edgesForDot(input);
    std::vector<Agedge_t*> edges(input.edges.size(), nullptr);
    for (size_t i = 0; i < input.edges.size(); ++i) {
        const auto [from, to] = input.edges[i];
        if (from < 0 || to < 0 || size_t(from) >= nodes.size() || size_t(to) >= nodes.size())
            throw Error(ErrorKind::Internal, "", "layout: edge " + std::to_string(i) + " names a missing node");
        if (!forDot[i])
            continue;
        const std::string name = "e" + std::to_string(i);
        edges[i] = agedge(g, nodes[size_t(from)], nodes[size_t(to)], const_cast<char*>(name.c_str()), 1);
    }

    if (gvLayout(gvc.get(), g, "dot") != 0)
        throw Error(ErrorKind::Internal, "", "Graphviz: dot layout failed");

    Layout out;
    const boxf bb = GD_bb(g);
    out.width = bb.UR.x - bb.LL.x;
    out.height = bb.UR.y - bb.LL.y;
    auto flip = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };
    out.centers.reserve(nodes.size());
    for (Agnode_t* n : nodes)
        out.centers.push_back(flip(ND_coord(n)));
    out.edges.resize(edges.size());
    for (size_t i = 0; i < edges.size(); ++i) {
        if (!edges[i]) {
            out.edges[i] = arc(input, out, input.edges[i].first, input.edges[i].second);
            continue;
        }
        const splines* spl = ED_spl(edges[i]);
        if (!spl || spl->size == 0)
            continue;
        const bezier& b = spl->list[0];
        LayoutEdge& e = out.edges[i];
        e.spline.reserve(size_t(b.size));
        for (int k = 0; k < b.size; ++k)
            e.spline.push_back(flip(b.list[k]));
        if (b.eflag) {
            e.hasArrow = true;
            e.arrowTip = flip(b.ep);
        }
    }
    gvFreeLayout(gvc.get(), g);
    return out;
}

}  // namespace ramiel
