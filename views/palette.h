// Colors shared by every view: one per cluster (stable: cluster i always gets
// color i), one per operator type (stable across models: hashed), and a heat
// map for measured times.
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

class QStyle;

namespace ramiel::studio {

QColor clusterColor(int cluster);
QColor opTypeColor(const QString& opType);
// t in [0, 1]: cool (cheap) to hot (expensive).
QColor heatColor(double t);
// Black or white, whichever reads better on `background`.
QColor textColorOn(const QColor& background);

// The Run chart's series by row (serial on one thread, serial on P threads,
// the plan), the same in both themes.
QColor runSeriesColor(int row);

// The graph canvas's colors in the light or the dark theme: the scene, its
// items, the legend and the minimap draw with these, not with literals.
struct SceneTheme {
    bool dark = false;
    QColor background;       // the canvas
    QColor terminalFill;     // graph inputs and outputs
    QColor unknownFill;      // a box with no color to show (no schedule, unknown cost)
    QColor unclustered;      // teaching: not clustered yet
    QColor outline;          // box outline
    QColor criticalOutline;  // box on the critical path
    QColor critical;         // critical-path edges and their legend swatch
    QColor edge;             // an ordinary edge
    QColor fadedEdge;        // teaching: edges off the current path
    QColor edgeLabel;        // shapes on edges
    QColor panel;            // legend and minimap backgrounds (translucent)
    QColor panelBorder;
    QColor panelText;
    QColor swatchBorder;
};
const SceneTheme& sceneTheme(bool dark);
// Whether `palette` is a dark one (light text on a dark window).
bool isDark(const QPalette& palette);
// Studio's dark palette (View > Dark Theme), every role set so that frames,
// placeholder text, disabled text and tooltips stay readable.
QPalette darkPalette();
// Fusion, with check boxes and radio buttons outlined in the palette's text
// color on a dark palette (Fusion draws their frame darker than the window,
// which hides an unchecked box on a dark one). Owned by the caller.
QStyle* createStudioStyle();

}  // namespace ramiel::studio
