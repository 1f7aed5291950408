// The metrics of docs/metrics.md, as labelled rows for the metrics panel, the
// compare view and the JSON export to share.
#pragma once

#include "studio_session.h"

#include <QString>
#include <QVector>

#include <limits>

namespace ramiel::studio {

struct MetricRow {
    QString section;
    QString name;
    QString value;
    QString help;  // tooltip: what the number means
    // The figure behind `value` (seconds, bytes, a count), NaN for text: what
    // Compare measures a difference on.
    double number = std::numeric_limits<double>::quiet_NaN();
};

QVector<MetricRow> metricRows(const PlannedModel& analysis);
// "12.3 ms" (core's formatSeconds), as a QString.
QString formatSeconds(double seconds);
// "13.3 MiB" (core's formatBytes), as a QString.
QString formatBytes(double bytes);
// Whether two schedules' rows differ enough to point out: figures by more than
// `relative` of the larger (0.01 % is noise, not a difference), text when unequal.
bool rowsDiffer(const MetricRow& a, const MetricRow& b, double relative = 0.01);

}  // namespace ramiel::studio
