// Exports of what Studio shows: the graph as SVG (vector) or PNG (rendered
// at twice the scene's resolution, capped to a size image viewers open), and
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

void writeSceneSvg(GraphScene& scene, const QString& path, const QString& title);
void writeScenePng(GraphScene& scene, const QString& path);
// {"info": ramiel.info/1, "schedule": ramiel.schedule/1} (docs/json.md).
void writeAnalysisJson(const PlannedModel& analysis, const QString& path);

}  // namespace ramiel::studio
