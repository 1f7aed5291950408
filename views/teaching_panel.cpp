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
#include <set>

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
    scene_->clearTeachingOverlay();
    prevButton_->setEnabled(false);
    nextButton_->setEnabled(false);
    playButton_->setEnabled(false);
    exitButton_->setEnabled(false);
    slider_->setEnabled(false);
    text_->setText(tr("Step through linear clustering: each step peels the heaviest path among the nodes not yet "
                      "clustered and makes it a cluster; the first is the critical path. The last step merges the "
                      "clusters down to P workers."));
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
    const size_t nodes = analysis_->prepared->model.graph.nodeCount();
    std::vector<int> clusters(nodes, -1);
    std::vector<NodeId> current;
    const int peeled = int(steps_->paths.size());
    const int merged = int(steps_->merges.size());
    if (step >= peeled && step < peeled + merged) {
        // Groups after merges 0..j; each drawn in the color of the cluster it merged into.
        const int j = step - peeled;
        std::vector<int> head(steps_->paths.size());
        for (size_t k = 0; k < head.size(); ++k)
            head[k] = int(k);
        for (int m = 0; m <= j; ++m)
            for (int& h : head)
                if (h == steps_->merges[size_t(m)].first)
                    h = steps_->merges[size_t(m)].second;
        std::vector<NodeId> moved;
        double movedCost = 0;
        for (size_t k = 0; k < steps_->paths.size(); ++k) {
            for (NodeId n : steps_->paths[k])
                clusters[size_t(n)] = head[k];
            if (head[k] == steps_->merges[size_t(j)].second && int(k) != steps_->merges[size_t(j)].second) {
                // Only the clusters this step moved (they were in the `from` group before it).
                int before = int(k);
                for (int m = 0; m < j; ++m)
                    if (before == steps_->merges[size_t(m)].first)
                        before = steps_->merges[size_t(m)].second;
                if (before == steps_->merges[size_t(j)].first) {
                    moved.insert(moved.end(), steps_->paths[k].begin(), steps_->paths[k].end());
                    movedCost += steps_->pathSeconds[k];
                }
            }
        }
        current = moved;
        std::set<int> groups(head.begin(), head.end());
        const bool free = j < steps_->freeMerges;
        text_->setText(tr("<b>Step %1 of %2</b>: merge %3 of %4. Cluster %5 (%6 node(s), %7) joins cluster %8%9. "
                          "%10 clusters remain.")
                           .arg(step + 1)
                           .arg(stepCount())
                           .arg(j + 1)
                           .arg(merged)
                           .arg(steps_->merges[size_t(j)].first)
                           .arg(moved.size())
                           .arg(formatSeconds(movedCost))
                           .arg(steps_->merges[size_t(j)].second)
                           .arg(free ? tr(": a free merge, their busy times never overlap")
                                     : tr(": the lightest cluster joins the partner with the smallest simulated "
                                          "makespan"))
                           .arg(groups.size()));
    } else if (step < peeled) {
        for (int k = 0; k <= step; ++k)
            for (NodeId n : steps_->paths[size_t(k)])
                clusters[size_t(n)] = k;
        current = steps_->paths[size_t(step)];
        const Graph& g = analysis_->prepared->model.graph;
        text_->setText(tr("<b>Step %1 of %2</b>: the heaviest path among the %3 nodes not yet clustered has %4 "
                          "node(s) and costs %5 (%6 to %7). It becomes cluster %8.%9")
                           .arg(step + 1)
                           .arg(stepCount())
                           .arg(std::accumulate(steps_->paths.begin() + step, steps_->paths.end(), size_t(0),
                                                [](size_t s, const auto& p) { return s + p.size(); }))
                           .arg(current.size())
                           .arg(formatSeconds(steps_->pathSeconds[size_t(step)]))
                           .arg(QString::fromStdString(g.node(current.front()).name).toHtmlEscaped())
                           .arg(QString::fromStdString(g.node(current.back()).name).toHtmlEscaped())
                           .arg(step)
                           .arg(step == 0 ? tr(" This first one is the critical path.") : QString()));
    } else {
        clusters = analysis_->clusterOfNode[0];
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
    scene_->setTeachingOverlay(std::move(clusters), std::move(current),
                               merging ? tr("clusters merged in this step") : QString());
    const QSignalBlocker block(slider_);
    slider_->setValue(step);
    prevButton_->setEnabled(step > 0);
    nextButton_->setEnabled(step + 1 < stepCount());
    playButton_->setEnabled(true);
    exitButton_->setEnabled(true);
    slider_->setEnabled(true);
}

}  // namespace ramiel::studio
