// The knobs: one row per scheduling option of the core's table (algorithm,
// workers P, batch B, degree d, cloning, switching, hybrid), the cost source,
// the shown graph copy, and a checkbox per registered pass (from the pass
// registry, so the list matches the CLI's --passes). Edits go to the session,
// which re-runs what they affect off the UI thread.
#pragma once

#include "studio_session.h"

#include <QWidget>

#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QSpinBox;
class QCheckBox;
class QLabel;

namespace ramiel::studio {

class TuningPanel : public QWidget {
    Q_OBJECT
public:
    explicit TuningPanel(StudioSession* session, QWidget* parent = nullptr);

    // The widget of a plan option (core/pipeline/options.h) by its name.
    QWidget* optionWidget(const std::string& name) const;
    QComboBox* algorithmBox() const;
    QSpinBox* workersBox() const;
    QSpinBox* batchBox() const;
    QSpinBox* degreeBox() const;
    QCheckBox* cloneBox() const;
    QComboBox* costsBox() const { return costs_; }
    QCheckBox* passBox(const std::string& name) const;
    QLabel* passStatsLabel() const { return passStats_; }
    QLabel* statusLabel() const { return status_; }
    QSpinBox* copyBox() const { return copy_; }

Q_SIGNALS:
    // The graph copy (sub-batch) whose clusters the graph shows, for d > 1.
    void shownCopyChanged(int copy);

private:
    QWidget* makeOptionWidget(const pipeline::PlanOption& option);
    void showSettings();
    void apply();
    void applyPasses();
    void showPassStats();

    StudioSession* session_;
    std::vector<std::pair<const pipeline::PlanOption*, QWidget*>> options_;
    QComboBox* costs_;
    std::vector<std::pair<std::string, QCheckBox*>> passes_;
    QLabel* passStats_;
    QSpinBox* copy_;
    QLabel* status_;
    bool updating_ = false;
};

}  // namespace ramiel::studio
