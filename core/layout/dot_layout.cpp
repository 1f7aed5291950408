#include "core/layout/dot_layout.h"

#include "core/util/error.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

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

}  // namespace

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
    std::vector<Agedge_t*> edges;
    edges.reserve(input.edges.size());
    for (size_t i = 0; i < input.edges.size(); ++i) {
        const auto [from, to] = input.edges[i];
        if (from < 0 || to < 0 || size_t(from) >= nodes.size() || size_t(to) >= nodes.size())
            throw Error(ErrorKind::Internal, "", "layout: edge " + std::to_string(i) + " names a missing node");
        const std::string name = "e" + std::to_string(i);
        edges.push_back(agedge(g, nodes[size_t(from)], nodes[size_t(to)], const_cast<char*>(name.c_str()), 1));
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
