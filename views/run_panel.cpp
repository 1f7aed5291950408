#include "run_panel.h"

#include "metric_rows.h"
#include "palette.h"

#include "core/runtime/profiling.h"
#include "core/runtime/runtime.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ramiel::studio {

RunPanel::RunPanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), iterations_(new QSpinBox(this)), runButton_(new QPushButton(tr("Run"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      profileButton_(new QPushButton(tr("Use as measured costs"), this)), summary_(new QLabel(this)),
      workers_(new QLabel(this)), chart_(new QChartView(this)), serial_(new QLineSeries(this)),
      parallel_(new QLineSeries(this)), xAxis_(new QValueAxis(this)), yAxis_(new QValueAxis(this))
{
    iterations_->setRange(1, 10000);
    iterations_->setValue(20);
    iterations_->setSuffix(tr(" iterations"));
    stopButton_->setEnabled(false);
    profileButton_->setEnabled(false);
    profileButton_->setToolTip(tr("Schedule with the per-node times measured in the serial runs"));
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setWordWrap(true);
    workers_->setWordWrap(true);

    serial_->setName(tr("serial, 1 thread"));
    parallel_->setName(tr("parallel (schedule)"));
    QChart* chart = chart_->chart();
    chart->addSeries(serial_);
    chart->addSeries(parallel_);
    // Iterations are whole numbers: ticks on integers only (never "0 0 0 0 1").
    xAxis_->setLabelFormat(QStringLiteral("%d"));
    xAxis_->setTickType(QValueAxis::TicksDynamic);
    xAxis_->setTickAnchor(0);
    xAxis_->setTitleText(tr("iteration"));
    yAxis_->setTitleText(tr("ms"));
    chart->addAxis(xAxis_, Qt::AlignBottom);
    chart->addAxis(yAxis_, Qt::AlignLeft);
    for (QLineSeries* s : {serial_, parallel_}) {
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
    }
    chart->legend()->setAlignment(Qt::AlignTop);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumSize(260, 140);
    applyChartTheme();

    // Controls and figures on the left, the live chart filling the rest.
    auto* controls = new QGridLayout;
    controls->addWidget(iterations_, 0, 0);
    controls->addWidget(runButton_, 0, 1);
    controls->addWidget(stopButton_, 1, 1);
    controls->addWidget(profileButton_, 1, 0);
    controls->addWidget(summary_, 2, 0, 1, 2);
    controls->addWidget(workers_, 3, 0, 1, 2);
    controls->setRowStretch(4, 1);
    auto* controlsWidget = new QWidget(this);
    controlsWidget->setLayout(controls);
    controlsWidget->setMaximumWidth(300);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(controlsWidget);
    layout->addWidget(chart_, 1);

    connect(runButton_, &QPushButton::clicked, this, &RunPanel::start);
    connect(stopButton_, &QPushButton::clicked, this, &RunPanel::stop);
    connect(profileButton_, &QPushButton::clicked, this, &RunPanel::useProfile);
    connect(session_, &StudioSession::modelChanged, this, [this] {
        profile_.clear();
        profileButton_->setEnabled(false);
        if (!running())
            clearResults();
    });
    // A new plan makes the last run's figures those of an earlier plan: say so.
    connect(session_, &StudioSession::analysisChanged, this, [this] {
        if (!running())
            updateSummary();
    });
    clearResults();
}

void RunPanel::clearResults()
{
    runAnalysis_.reset();
    serial_->clear();
    parallel_->clear();
    serialTimes_.clear();
    parallelTimes_.clear();
    busy_.clear();
    wait_.clear();
    workers_->clear();
    // No axes without points: an empty chart says what it will show.
    xAxis_->setVisible(false);
    yAxis_->setVisible(false);
    chart_->chart()->setTitle(tr("Latency of each iteration, once a run starts"));
    summary_->setText(tr("Runs the model on libtorch with seeded random inputs: serial with one thread and the "
                         "current schedule in parallel, interleaved."));
    Q_EMIT runFigures({});
}

RunPanel::~RunPanel()
{
    stop();
    if (thread_)
        thread_->wait();
}

int RunPanel::serialPoints() const { return int(serial_->count()); }
int RunPanel::parallelPoints() const { return int(parallel_->count()); }

void RunPanel::start()
{
    auto analysis = session_->analysis();
    if (thread_ || !analysis)
        return;
    clearResults();
    runAnalysis_ = analysis;
    runButton_->setEnabled(false);
    stopButton_->setEnabled(true);
    summary_->setText(tr("Loading libtorch and preparing the model..."));

    stop_ = std::make_shared<std::atomic<bool>>(false);
    auto stopFlag = stop_;
    const int iterations = iterations_->value();
    thread_ = QThread::create([this, analysis, stopFlag, iterations] {
        QString error;
        std::vector<double> profile;
        try {
            const PreparedModel& p = *analysis->prepared;
            const size_t nodes = p.model.graph.nodeCount();
            std::unique_ptr<CompiledModel> model = runtime().compile(p.model);
            model->setInputs(model->randomInputs(analysis->settings.batch, 1234));
            std::unique_ptr<Executor> serial = model->serialExecutor(1);
            std::unique_ptr<Executor> parallel =
                model->parallelExecutor(analysis->plan.schedule);
            serial->run();  // warm-up: first-touch allocations, oneDNN primitive creation
            parallel->run();
            std::vector<std::vector<double>> perNode(nodes);
            for (int i = 0; i < iterations && !*stopFlag; ++i) {
                RunProfile sp, pp;
                RunIteration it;
                it.index = i;
                it.serialSeconds = serial->run(&sp);
                it.parallelSeconds = parallel->run(&pp);
                it.workerBusy = pp.workerBusy;
                it.workerWait = pp.workerWait;
                for (size_t n = 0; n < nodes && n < sp.nodeSeconds.size(); ++n)
                    perNode[n].push_back(sp.nodeSeconds[n] / analysis->settings.batch);
                QMetaObject::invokeMethod(this, [this, it] { onIteration(it); }, Qt::QueuedConnection);
            }
            if (!perNode.empty() && !perNode[0].empty()) {
                profile.resize(nodes);
                for (size_t n = 0; n < nodes; ++n)
                    profile[n] = median(perNode[n]);
            }
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, error, profile]() mutable { onDone(error, std::move(profile)); }, Qt::QueuedConnection);
    });
    thread_->start();
}

void RunPanel::stop()
{
    if (stop_)
        *stop_ = true;
}

void RunPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() != QEvent::PaletteChange)
        return;
    applyChartTheme();
}

void RunPanel::applyChartTheme()
{
    QChart* chart = chart_->chart();
    chart->setTheme(isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    // setTheme recolors the series: give them back their own colors, the same in both themes.
    serial_->setPen(QPen(runSeriesColor(false), 2));
    parallel_->setPen(QPen(runSeriesColor(true), 2));
    chart->setBackgroundBrush(palette().color(QPalette::Base));
    chart->setBackgroundRoundness(0);
}

void RunPanel::onIteration(const RunIteration& it)
{
    serialTimes_.push_back(it.serialSeconds);
    parallelTimes_.push_back(it.parallelSeconds);
    serial_->append(it.index, it.serialSeconds * 1e3);
    parallel_->append(it.index, it.parallelSeconds * 1e3);
    busy_.resize(it.workerBusy.size(), 0);
    wait_.resize(it.workerWait.size(), 0);
    for (size_t w = 0; w < it.workerBusy.size(); ++w)
        busy_[w] += it.workerBusy[w];
    for (size_t w = 0; w < it.workerWait.size(); ++w)
        wait_[w] += it.workerWait[w];
    double maxMs = 0;
    for (double s : serialTimes_)
        maxMs = std::max(maxMs, s * 1e3);
    for (double s : parallelTimes_)
        maxMs = std::max(maxMs, s * 1e3);
    const int last = std::max(1, it.index);
    xAxis_->setRange(0, last);
    // 1, 2, 5, 10, 20, ... iterations a tick: at most about 8 ticks.
    double step = 1;
    while (last / step > 8)
        step *= (QString::number(step).startsWith('2') ? 2.5 : 2);
    xAxis_->setTickInterval(step);
    yAxis_->setRange(0, maxMs * 1.15);
    yAxis_->applyNiceNumbers();
    xAxis_->setVisible(true);
    yAxis_->setVisible(true);
    chart_->chart()->setTitle(QString());
    updateSummary();
}

void RunPanel::updateSummary()
{
    if (serialTimes_.empty())
        return;
    const double s = median(serialTimes_), p = median(parallelTimes_);
    const double simulated = runAnalysis_ ? runAnalysis_->plan.simulation.makespan : 0;
    QString text = tr("<b>%1 iterations</b><br>serial (1 thread): median %2<br>parallel: median %3<br>"
                      "speedup <b>%4x</b><br>simulated makespan: %5")
                       .arg(serialTimes_.size())
                       .arg(formatSeconds(s), formatSeconds(p))
                       .arg(p > 0 ? s / p : 0, 0, 'f', 2)
                       .arg(formatSeconds(simulated));
    if (runAnalysis_ && runAnalysis_ != session_->analysis() && !running()) {
        const PlanSettings& r = runAnalysis_->settings;
        text += tr("<br><i>Measured with the plan of that run (%1, P = %2, B = %3, d = %4); the plan has changed "
                   "since: run again for the current one.</i>")
                    .arg(QString::fromStdString(r.algorithm))
                    .arg(runAnalysis_->problem.workers)
                    .arg(r.batch)
                    .arg(r.degree);
    }
    summary_->setText(text);
    QStringList w;
    const double total = std::accumulate(parallelTimes_.begin(), parallelTimes_.end(), 0.0);
    for (size_t k = 0; k < busy_.size(); ++k)
        w << tr("W%1 busy %2%").arg(k).arg(total > 0 ? 100.0 * busy_[k] / total : 0, 0, 'f', 0);
    workers_->setText(tr("Worker utilization: ") + w.join(QStringLiteral(", ")));
    Q_EMIT runFigures({{tr("Serial, 1 thread (median)"), formatSeconds(s)},
                       {tr("Parallel (median)"), formatSeconds(p)},
                       {tr("Speedup"), QString::number(p > 0 ? s / p : 0, 'f', 3)},
                       {tr("Iterations"), QString::number(serialTimes_.size())}});
}

void RunPanel::onDone(const QString& error, std::vector<double> profile)
{
    thread_->wait();
    thread_->deleteLater();
    thread_ = nullptr;
    runButton_->setEnabled(true);
    stopButton_->setEnabled(false);
    if (!error.isEmpty()) {
        summary_->setText(tr("Run failed: %1").arg(error));
        Q_EMIT finished(false, error);
        return;
    }
    // A profile only applies to the model it was measured on.
    if (session_->prepared() == runAnalysis_->prepared && !profile.empty()) {
        profile_ = std::move(profile);
        profileButton_->setEnabled(true);
    }
    updateSummary();
    Q_EMIT finished(true, {});
}

void RunPanel::useProfile()
{
    if (profile_.empty() || !runAnalysis_ || session_->prepared() != runAnalysis_->prepared)
        return;
    session_->setMeasuredSeconds(profile_);
    PlanSettings s = session_->settings();
    s.costs = "measured";
    session_->setSettings(s);
}

}  // namespace ramiel::studio
