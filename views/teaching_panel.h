// Teaching mode: steps through linear clustering one peeled path at a time
// (the heaviest path among the nodes not yet clustered), then one merge at a
// time down to P workers, then the schedule as planned. Drives the graph
// scene's overlay; the window moves the view to the step's nodes and shows
// the step's clustering in the Gantt and the cluster loads (stepShown).
#pragma once

#include "studio_session.h"

#include <QWidget>

#include <vector>

class QLabel;
class QPushButton;
class QSlider;
class QTimer;

namespace ramiel::studio {

class GraphScene;

class TeachingPanel : public QWidget {
    Q_OBJECT
public:
    TeachingPanel(StudioSession* session, GraphScene* scene, QWidget* parent = nullptr);

    // Steps: one per linear cluster in the order it was peeled, one per merge,
    // and the planned schedule.
    // The steps are computed off the UI thread after start(): 0 until they arrive.
    int stepCount() const { return paths().empty() ? 0 : int(paths().size() + merges().size()) + 1; }
    int step() const { return step_; }
    const std::vector<std::vector<NodeId>>& paths() const { return steps_->paths; }
    const std::vector<std::pair<int32_t, int32_t>>& merges() const { return steps_->merges; }
    QLabel* description() const { return text_; }
    // The step shown, simulated as a schedule (the last step: the plan itself);
    // null when not teaching.
    std::shared_ptr<const PlannedModel> stepPlan() const { return stepPlan_; }
    // By cluster of stepPlan(): the color index the graph shows it in (-1: the
    // nodes not yet clustered); empty: cluster i in color i.
    const std::vector<int>& stepColors() const { return stepColors_; }
    // The nodes the step is about: the path peeled, the clusters merged; empty at the last step.
    const std::vector<NodeId>& stepNodes() const { return stepNodes_; }
    // What the charts say the step is ("step 3 of 12: 3 clusters, the rest not yet clustered").
    QString stepTitle() const { return stepTitle_; }

Q_SIGNALS:
    // A step was shown, or teaching ended (stepPlan() is null then).
    void stepShown();

public Q_SLOTS:
    void start();
    void next();
    void previous();
    void play(bool on);
    void exit();
    void showStep(int step);

private:
    void showSteps(std::shared_ptr<const PlannedModel> analysis, std::shared_ptr<const TeachingSteps> steps);

    StudioSession* session_;
    GraphScene* scene_;
    QLabel* text_;
    QPushButton* startButton_;
    QPushButton* prevButton_;
    QPushButton* nextButton_;
    QPushButton* playButton_;
    QPushButton* exitButton_;
    QSlider* slider_;
    QTimer* timer_;
    std::shared_ptr<const TeachingSteps> steps_;  // never null
    std::shared_ptr<const PlannedModel> analysis_;  // the plan the steps are of
    int request_ = 0;                             // the latest start(): older results are dropped
    int step_ = -1;  // -1: not teaching
    std::shared_ptr<const PlannedModel> stepPlan_;
    std::vector<int> stepColors_;
    std::vector<NodeId> stepNodes_;
    QString stepTitle_;
};

}  // namespace ramiel::studio
