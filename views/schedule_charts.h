// The schedule drawn two ways: per-cluster loads as a bar chart (QtCharts)
// and the simulated run as a Gantt chart (one row per worker).
#pragma once

#include <QWidget>

#include <memory>

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
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis);
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
};

class LoadsChart : public QWidget {
    Q_OBJECT
public:
    explicit LoadsChart(QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis);
    int barCount() const { return bars_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    QChartView* view_;
    std::shared_ptr<const PlannedModel> analysis_;
    int bars_ = 0;
};

}  // namespace ramiel::studio
