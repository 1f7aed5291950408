// Graph layout with Graphviz's `dot` (layered, edges as splines). Generic:
// the caller decides what the boxes are and how big; coordinates come back
// in the caller's units with y pointing down and the origin at the top left.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ramiel {

struct LayoutPoint {
    double x = 0;
    double y = 0;
};

struct LayoutInput {
    std::vector<std::pair<double, double>> nodeSizes;  // width, height
    std::vector<std::pair<int, int>> edges;            // from, to (node indices)
    bool leftToRight = false;                          // default: top to bottom
    double nodeSeparation = 18;
    double rankSeparation = 28;
    // dot's cost grows with the ranks long edges cross (densenet121's dense
    // concatenations: minutes). Beyond this many crossings the longest edges
    // are left out of dot and drawn as arcs beside the layout.
    int maxRankCrossings = 1000;
};

struct LayoutEdge {
    // Cubic Bezier control points: p0, then (c1, c2, p) triples.
    std::vector<LayoutPoint> spline;
    bool routedByDot = true;  // false: a long edge drawn as an arc (see maxRankCrossings)
    bool hasArrow = false;
    LayoutPoint arrowTip;  // where the arrowhead points, when hasArrow
};

struct Layout {
    double width = 0;
    double height = 0;
    std::vector<LayoutPoint> centers;  // by node index
    std::vector<LayoutEdge> edges;     // by edge index
};

// Which edges go to dot: all, unless their estimated rank crossings exceed
// input.maxRankCrossings; then the longest are left out. By edge index.
std::vector<bool> edgesForDot(const LayoutInput& input);

// The loaded Graphviz library's version ("2.43.0"), from gvcVersion().
std::string graphvizVersion();

// Runs dot. Graphviz is not thread-safe, so calls are serialized; any thread
// may call it. Throws Error(Internal) if Graphviz fails.
Layout layoutWithDot(const LayoutInput& input);

}  // namespace ramiel
