// The metrics of docs/metrics.md, as labelled rows for the metrics panel, the
// compare view and the JSON export to share.
#pragma once

#include "studio_session.h"

#include <QString>
#include <QVector>

namespace ramiel::studio {

struct MetricRow {
    QString section;
    QString name;
    QString value;
    QString help;  // tooltip: what the number means
};

QVector<MetricRow> metricRows(const PlannedModel& analysis);
QString formatSeconds(double seconds);

}  // namespace ramiel::studio
