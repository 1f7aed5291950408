// The schedule drawn two ways: per-cluster loads as a bar chart (QtCharts)
// and the simulated run as a Gantt chart (one row per worker). Teaching
// shows a step's clustering in them: rows and bars then take the colors the
// graph gives those clusters.
#pragma once

#include <QWidget>

#include <QString>

#include <memory>
#include <vector>

class QChartView;

namespace ramiel::pipeline {
struct PlannedModel;
}

namespace ramiel::studio {

using pipeline::PlannedModel;


class GanttChart : public QWidget {
    Q_OBJECT
public:
    explicit GanttChart(QWidget* parent = nullptr);
    // `colors`: by cluster, the color index to draw it in (-1: grey, "rest");
    // empty: cluster i in color i. `title` replaces the workers in the caption.
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis, std::vector<int> colors = {}, QString title = {});
    std::shared_ptr<const PlannedModel> analysis() const { return analysis_; }
    // The color of cluster (row) `cluster` as drawn.
    QColor rowColor(int cluster) const;
    QSize sizeHint() const override { return {480, 220}; }
    QSize minimumSizeHint() const override { return {200, 90}; }
    // The tooltip of the bar at `pos` (node, operator, worker, copy, start and end); empty off the bars.
    QString toolTipAt(QPointF pos) const;
    // Where entry `i` of the simulation's Gantt list is drawn.
    QRectF barRect(int i) const;
    // The line above the chart: the workers and their threads, makespan and speedup.
    QString caption() const;

Q_SIGNALS:
    void nodeClicked(int node);

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    QRectF plotArea() const;
    int entryAt(QPointF p) const;

    std::shared_ptr<const PlannedModel> analysis_;
    std::vector<int> colors_;
    QString title_;
};

class LoadsChart : public QWidget {
    Q_OBJECT
public:
    explicit LoadsChart(QWidget* parent = nullptr);
    // `colors` as GanttChart's.
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis, std::vector<int> colors = {});
    std::shared_ptr<const PlannedModel> analysis() const { return analysis_; }
    int barCount() const { return bars_; }
    // The bars' labels, left to right.
    QStringList categories() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    QChartView* view_;
    std::shared_ptr<const PlannedModel> analysis_;
    std::vector<int> colors_;
    int bars_ = 0;
};

}  // namespace ramiel::studio
