// The knobs of the schedule: algorithm, workers P, batch B, hypercluster
// degree d, cost source, cloning. Edits go to the session, which re-plans
// off the UI thread.
#pragma once

#include "studio_session.h"

#include <QWidget>

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
    QCheckBox* cloneBox() const { return clone_; }
    QSpinBox* copyBox() const { return copy_; }

Q_SIGNALS:
    // The graph copy (sub-batch) whose clusters the graph shows, for d > 1.
    void shownCopyChanged(int copy);

private:
    void showSettings();
    void apply();

    StudioSession* session_;
    QComboBox* algorithm_;
    QSpinBox* workers_;
    QSpinBox* batch_;
    QSpinBox* degree_;
    QComboBox* costs_;
    QCheckBox* clone_;
    QSpinBox* copy_;
    QLabel* status_;
    bool updating_ = false;
};

}  // namespace ramiel::studio
