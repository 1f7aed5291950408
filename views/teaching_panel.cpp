#include "teaching_panel.h"

#include "graph_scene.h"
#include "metric_rows.h"


#include <QFutureWatcher>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTimer>

#include <algorithm>
#include <numeric>

namespace ramiel::studio {

TeachingPanel::TeachingPanel(StudioSession* session, GraphScene* scene, QWidget* parent)
    : QWidget(parent), session_(session), scene_(scene), text_(new QLabel(this)),
      startButton_(new QPushButton(tr("Start"), this)), prevButton_(new QPushButton(tr("< Previous"), this)),
      nextButton_(new QPushButton(tr("Next >"), this)), playButton_(new QPushButton(tr("Play"), this)),
      exitButton_(new QPushButton(tr("Exit"), this)), slider_(new QSlider(Qt::Horizontal, this)),
      timer_(new QTimer(this)), steps_(std::make_shared<const TeachingSteps>())
{
    text_->setWordWrap(true);
    text_->setMinimumHeight(70);
    text_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    playButton_->setCheckable(true);
    timer_->setInterval(900);
    auto* grid = new QGridLayout(this);
    grid->addWidget(startButton_, 0, 0);
    grid->addWidget(exitButton_, 0, 1);
    grid->addWidget(prevButton_, 1, 0);
    grid->addWidget(nextButton_, 1, 1);
    grid->addWidget(playButton_, 2, 0);
    grid->addWidget(slider_, 2, 1);
    grid->addWidget(text_, 3, 0, 1, 2);
    grid->setRowStretch(4, 1);

    connect(startButton_, &QPushButton::clicked, this, &TeachingPanel::start);
    connect(exitButton_, &QPushButton::clicked, this, &TeachingPanel::exit);
    connect(prevButton_, &QPushButton::clicked, this, &TeachingPanel::previous);
    connect(nextButton_, &QPushButton::clicked, this, &TeachingPanel::next);
    connect(playButton_, &QPushButton::toggled, this, &TeachingPanel::play);
    connect(slider_, &QSlider::valueChanged, this, [this](int v) {
        if (step_ >= 0 && v != step_)
            showStep(v);
    });
    connect(timer_, &QTimer::timeout, this, [this] {
        if (step_ + 1 >= stepCount())
            playButton_->setChecked(false);
        else
            next();
    });
    connect(session_, &StudioSession::analysisChanged, this, [this] {
        if (step_ >= 0)
            start();  // the costs or settings changed: the steps did too
    });
    connect(session_, &StudioSession::modelChanged, this, &TeachingPanel::exit);
    exit();
}

void TeachingPanel::start()
{
    auto analysis = session_->analysis();
    if (!analysis) {
        text_->setText(tr("Open a model first."));
        return;
    }
    const int request = ++request_;
    text_->setText(tr("Computing the steps..."));
    auto* watcher = new QFutureWatcher<std::shared_ptr<const TeachingSteps>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, analysis, request] {
        watcher->deleteLater();
        if (request == request_ && analysis == session_->analysis() && watcher->result())
            showSteps(analysis, watcher->result());
    });
    watcher->setFuture(session_->teachingStepsAsync());
}

void TeachingPanel::showSteps(std::shared_ptr<const PlannedModel> analysis, std::shared_ptr<const TeachingSteps> steps)
{
    analysis_ = std::move(analysis);
    steps_ = std::move(steps);
    if (paths().empty())
        return;
    slider_->setRange(0, stepCount() - 1);
    showStep(0);
}

void TeachingPanel::exit()
{
    ++request_;
    playButton_->setChecked(false);
    step_ = -1;
    const bool wasShowing = stepPlan_ != nullptr;
    stepPlan_.reset();
    stepColors_.clear();
    stepNodes_.clear();
    stepTitle_.clear();
    scene_->clearTeachingOverlay();
    prevButton_->setEnabled(false);
    nextButton_->setEnabled(false);
    playButton_->setEnabled(false);
    exitButton_->setEnabled(false);
    slider_->setEnabled(false);
    text_->setText(tr("Step through linear clustering: each step peels the heaviest path among the nodes not yet "
                      "clustered and makes it a cluster; the first is the critical path. The last step merges the "
                      "clusters down to P workers. The view, the Gantt and the cluster loads follow the step."));
    if (wasShowing)
        Q_EMIT stepShown();
}

void TeachingPanel::next() { showStep(step_ + 1); }
void TeachingPanel::previous() { showStep(step_ - 1); }

void TeachingPanel::play(bool on)
{
    if (on) {
        if (step_ < 0 || step_ + 1 >= stepCount())
            start();
        timer_->start();
        playButton_->setText(tr("Pause"));
    } else {
        timer_->stop();
        playButton_->setText(tr("Play"));
    }
}

void TeachingPanel::showStep(int step)
{
    if (paths().empty() || !analysis_)
        return;
    step = std::clamp(step, 0, stepCount() - 1);
    step_ = step;
    const int peeled = int(steps_->paths.size());
    const int merged = int(steps_->merges.size());
    std::vector<int> clusters;
    if (step < peeled + merged) {
        pipeline::TeachingState state = pipeline::teachingState(*analysis_, *steps_, step);
        stepPlan_ = pipeline::teachingPlan(*analysis_, *steps_, state);
        stepColors_ = state.clusterColors;
        stepNodes_ = state.current;
        clusters = std::move(state.clusterOfNode);
        const bool rest = !stepColors_.empty() && stepColors_.back() < 0;
        stepTitle_ = rest ? tr("step %1 of %2: %n cluster(s), the rest not yet clustered", "", state.groups)
                                .arg(step + 1)
                                .arg(stepCount())
                          : tr("step %1 of %2: %n cluster(s)", "", state.groups).arg(step + 1).arg(stepCount());
        if (step >= peeled) {
            const int j = step - peeled;
            const bool free = j < steps_->freeMerges;
            text_->setText(tr("<b>Step %1 of %2</b>: merge %3 of %4. Cluster %5 (%6 node(s), %7) joins cluster "
                              "%8%9. %10 clusters remain.")
                               .arg(step + 1)
                               .arg(stepCount())
                               .arg(j + 1)
                               .arg(merged)
                               .arg(steps_->merges[size_t(j)].first)
                               .arg(stepNodes_.size())
                               .arg(formatSeconds(state.currentSeconds))
                               .arg(steps_->merges[size_t(j)].second)
                               .arg(free ? tr(": a free merge, their busy times never overlap")
                                         : tr(": the lightest cluster joins the partner with the smallest "
                                              "simulated makespan"))
                               .arg(state.groups));
        } else {
            const Graph& g = analysis_->prepared->model.graph;
            text_->setText(tr("<b>Step %1 of %2</b>: the heaviest path among the %3 nodes not yet clustered has %4 "
                              "node(s) and costs %5 (%6 to %7). It becomes cluster %8.%9")
                               .arg(step + 1)
                               .arg(stepCount())
                               .arg(std::accumulate(steps_->paths.begin() + step, steps_->paths.end(), size_t(0),
                                                    [](size_t s, const auto& p) { return s + p.size(); }))
                               .arg(stepNodes_.size())
                               .arg(formatSeconds(state.currentSeconds))
                               .arg(QString::fromStdString(g.node(stepNodes_.front()).name).toHtmlEscaped())
                               .arg(QString::fromStdString(g.node(stepNodes_.back()).name).toHtmlEscaped())
                               .arg(step)
                               .arg(step == 0 ? tr(" This first one is the critical path.") : QString()));
        }
    } else {
        clusters = analysis_->clusterOfNode[0];
        stepPlan_ = analysis_;
        stepColors_.clear();
        stepNodes_.clear();
        stepTitle_ = tr("step %1 of %2: the schedule as planned").arg(step + 1).arg(stepCount());
        const MergeReport& m = analysis_->plan.merges;
        text_->setText(tr("<b>Step %1 of %2</b>: the schedule as planned: %3 linear clusters merged into %4 for "
                          "P = %5 (%6 free merges of clusters that never overlap in time, %7 guided by the simulated "
                          "makespan), numbered by load, with cloning and hyperclustering applied. Algorithm in use: "
                          "%8.")
                           .arg(step + 1)
                           .arg(stepCount())
                           .arg(peeled)
                           .arg(analysis_->plan.schedule.clusters.size())
                           .arg(analysis_->problem.workers)
                           .arg(m.freeMerges)
                           .arg(m.guidedMerges)
                           .arg(QString::fromStdString(analysis_->settings.algorithm)));
    }
    const bool merging = step >= peeled && step < peeled + merged;
    scene_->setTeachingOverlay(std::move(clusters), stepNodes_,
                               merging ? tr("clusters merged in this step") : QString());
    const QSignalBlocker block(slider_);
    slider_->setValue(step);
    prevButton_->setEnabled(step > 0);
    nextButton_->setEnabled(step + 1 < stepCount());
    playButton_->setEnabled(true);
    exitButton_->setEnabled(true);
    slider_->setEnabled(true);
    Q_EMIT stepShown();
}

}  // namespace ramiel::studio
