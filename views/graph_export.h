// Exports of what Studio shows: the graph with its legend as SVG (vector) or
// PNG (rendered at twice the scene's resolution, capped to a size image
// viewers open), and
// the metrics with the schedule as JSON. Every write is atomic and throws
// Error(Io) naming the file.
#pragma once

#include <QString>

namespace ramiel::pipeline {
struct PlannedModel;
}

namespace ramiel::studio {

using pipeline::PlannedModel;

class GraphScene;

// Both draw the graph in the light theme with its legend (unless `legend` is
// false) before the graph's first rank, where it covers nothing.
void writeSceneSvg(GraphScene& scene, const QString& path, const QString& title, bool legend = true);
void writeScenePng(GraphScene& scene, const QString& path, bool legend = true);
// {"info": ramiel.info/1, "schedule": ramiel.schedule/1} (docs/json.md).
void writeAnalysisJson(const PlannedModel& analysis, const QString& path);

}  // namespace ramiel::studio
