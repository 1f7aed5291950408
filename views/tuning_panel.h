// The knobs: algorithm, workers P, batch B, hypercluster degree d, cost
// source, and a checkbox per registered pass (from the pass registry, so the
// list matches the CLI's --passes). Edits go to the session, which re-runs
// what they affect off the UI thread.
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

    QComboBox* algorithmBox() const { return algorithm_; }
    QSpinBox* workersBox() const { return workers_; }
    QSpinBox* batchBox() const { return batch_; }
    QSpinBox* degreeBox() const { return degree_; }
    QComboBox* costsBox() const { return costs_; }
    QCheckBox* cloneBox() const { return passBox("clone"); }
    QCheckBox* passBox(const std::string& name) const;
    QLabel* passStatsLabel() const { return passStats_; }
    QSpinBox* copyBox() const { return copy_; }

Q_SIGNALS:
    // The graph copy (sub-batch) whose clusters the graph shows, for d > 1.
    void shownCopyChanged(int copy);

private:
    void showSettings();
    void apply();
    void applyPasses();
    void showPassStats();

    StudioSession* session_;
    QComboBox* algorithm_;
    QSpinBox* workers_;
    QSpinBox* batch_;
    QSpinBox* degree_;
    QComboBox* costs_;
    std::vector<std::pair<std::string, QCheckBox*>> passes_;
    QLabel* passStats_;
    QSpinBox* copy_;
    QLabel* status_;
    bool updating_ = false;
};

}  // namespace ramiel::studio
