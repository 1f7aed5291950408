// Colors shared by every view: one per cluster (stable: cluster i always gets
// color i), one per operator type (stable across models: hashed), and a heat
// map for measured times.
#pragma once

#include <QColor>
#include <QString>

namespace ramiel::studio {

QColor clusterColor(int cluster);
QColor opTypeColor(const QString& opType);
// t in [0, 1]: cool (cheap) to hot (expensive).
QColor heatColor(double t);
// Black or white, whichever reads better on `background`.
QColor textColorOn(const QColor& background);

}  // namespace ramiel::studio
