// A constant tensor feeding a node (a weight, a bias), inspected: its shape,
// element type and size, min, max, mean and standard deviation, NaNs,
// infinities and zeros, and a histogram (QtCharts). The statistics come from
// core (tensorStats), computed off the UI thread.
#pragma once

#include "core/analysis/tensor_stats.h"
#include "core/ir/graph.h"

#include <QWidget>

#include <memory>
#include <optional>

class QChartView;
class QLabel;

namespace ramiel::pipeline {
struct PlannedModel;
}

namespace ramiel::studio {

class InitializerView : public QWidget {
    Q_OBJECT
public:
    explicit InitializerView(QWidget* parent = nullptr);
    // Shows `value` of the analysis's graph when it is a constant; hides otherwise.
    void inspect(std::shared_ptr<const pipeline::PlannedModel> analysis, ValueId value);
    ValueId value() const { return value_; }
    // The statistics once computed (nullopt before, and for tensors without numbers).
    const std::optional<TensorStats>& stats() const { return stats_; }
    QLabel* figuresLabel() const { return figures_; }
    QChartView* histogram() const { return chart_; }

Q_SIGNALS:
    void statsReady();

protected:
    void changeEvent(QEvent* event) override;  // the chart follows the palette

private:
    void showStats();

    QLabel* title_;
    QLabel* figures_;
    QChartView* chart_;
    std::shared_ptr<const pipeline::PlannedModel> analysis_;
    ValueId value_ = kNone;
    std::optional<TensorStats> stats_;
    int generation_ = 0;
};

}  // namespace ramiel::studio
