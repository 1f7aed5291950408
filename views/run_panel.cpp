#include "run_panel.h"

#include "metric_rows.h"
#include "palette.h"

#include "core/pipeline/isolated_timing.h"
#include "core/pipeline/run_inputs.h"
#include "core/report/host_report.h"
#include "core/runtime/profiling.h"
#include "core/runtime/runtime.h"

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QSpinBox>
#include <QThread>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ramiel::studio {

namespace {

// "linear, 2 workers x 1 thread"; one worker is "serial", never parallel.
QString planLabel(const PlannedModel& a)
{
    const Schedule& s = a.plan.schedule;
    pipeline::RunConfig c;
    c.settings = a.settings;
    if (s.clusters.size() == 1 && std::all_of(s.threads.begin(), s.threads.end(), [](int32_t t) { return t == 0; }))
        c.serialThreads = s.maxThreads();
    else
        c.schedule = s;
    return QString::fromStdString(c.title() + ", " + c.threadsText());
}

// The chart's short names ("1 thread", "2 threads", "plan"); the summary has the full ones.
QString legendName(size_t row, const std::vector<int>& serialThreads)
{
    if (row >= serialThreads.size())
        return RunPanel::tr("plan");
    const int n = serialThreads[row];
    return n == 1 ? RunPanel::tr("1 thread") : RunPanel::tr("%1 threads").arg(n);
}

}  // namespace

RunPanel::RunPanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), iterations_(new QSpinBox(this)), runButton_(new QPushButton(tr("Run"), this)),
      stopButton_(new QPushButton(tr("Stop"), this)),
      profileButton_(new QPushButton(tr("Use as measured costs"), this)), summary_(new QLabel(this)),
      workers_(new QLabel(this)), chart_(new QChartView(this)), xAxis_(new QValueAxis(this)),
      yAxis_(new QValueAxis(this))
{
    iterations_->setRange(1, 10000);
    iterations_->setValue(20);
    iterations_->setSuffix(tr(" iterations"));
    stopButton_->setEnabled(false);
    profileButton_->setEnabled(false);
    profileButton_->setToolTip(tr("Schedule with the per-node times measured in the serial runs on one thread"));
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setWordWrap(true);
    workers_->setWordWrap(true);

    QChart* chart = chart_->chart();
    // Iterations are whole numbers: ticks on integers only (never "0 0 0 0 1").
    xAxis_->setLabelFormat(QStringLiteral("%d"));
    xAxis_->setTickType(QValueAxis::TicksDynamic);
    xAxis_->setTickAnchor(0);
    xAxis_->setTitleText(tr("iteration"));
    yAxis_->setTitleText(tr("ms"));
    yAxis_->setLabelFormat(QStringLiteral("%g"));  // ticks are round: 1000, not %.3g's 1e+03
    chart->addAxis(xAxis_, Qt::AlignBottom);
    chart->addAxis(yAxis_, Qt::AlignLeft);
    for (int row = 0; row < 3; ++row) {
        auto* s = new QLineSeries(this);
        chart->addSeries(s);
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
        series_.push_back(s);
    }
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumSize(260, 140);
    applyChartTheme();

    // Controls and figures on the left, the live chart filling the rest.
    // Controls in a row; the figures (scrolling when the dock is low) beside the live chart.
    auto* controls = new QHBoxLayout;
    controls->addWidget(iterations_);
    controls->addWidget(runButton_);
    controls->addWidget(stopButton_);
    controls->addWidget(profileButton_);
    controls->addStretch();
    auto* figures = new QWidget(this);
    auto* figuresLayout = new QVBoxLayout(figures);
    figuresLayout->setContentsMargins(0, 0, 4, 0);
    figuresLayout->addWidget(summary_);
    figuresLayout->addWidget(workers_);
    figuresLayout->addStretch();
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(figures);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(300);
    auto* body = new QHBoxLayout;
    body->addWidget(scroll, 3);
    body->addWidget(chart_, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addLayout(body, 1);

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
    for (QLineSeries* s : series_) {
        s->clear();
        s->setName(QString());
    }
    labels_.clear();
    times_.clear();
    busy_.clear();
    host_.reset();
    workers_->clear();
    // No axes without points: an empty chart says what it will show.
    xAxis_->setVisible(false);
    yAxis_->setVisible(false);
    chart_->chart()->setTitle(tr("Latency of each iteration, once a run starts"));
    summary_->setText(tr("Runs the model on libtorch with seeded random inputs, each configuration in its own "
                         "process, in turns: serial on one thread, serial on P threads and the current schedule."));
    Q_EMIT runFigures({});
}

RunPanel::~RunPanel()
{
    stop();
    if (thread_)
        thread_->wait();
}

int RunPanel::serialPoints() const { return int(series_.front()->count()); }
int RunPanel::parallelPoints() const { return labels_.isEmpty() ? 0 : int(series_[size_t(labels_.size() - 1)]->count()); }

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

    // The rows: serial on one thread, serial on P threads (P > 1), the plan.
    const Schedule& schedule = analysis->plan.schedule;
    const int cores = analysis->settings.cores();
    std::vector<int> serialThreads = {1};
    if (cores > 1)
        serialThreads.push_back(cores);
    for (int t : serialThreads) {
        pipeline::RunConfig serial;
        serial.serialThreads = t;
        labels_ << tr("serial, %1").arg(QString::fromStdString(serial.threadsText()));
    }
    labels_ << planLabel(*analysis);
    for (size_t row = 0; row < series_.size(); ++row) {
        series_[row]->setName(row < size_t(labels_.size()) ? legendName(row, serialThreads) : QString());
        for (auto* marker : chart_->chart()->legend()->markers(series_[row]))
            marker->setVisible(row < size_t(labels_.size()));
    }
    times_.assign(size_t(labels_.size()), {});
    chart_->setToolTip(labels_.join(QStringLiteral("\n")));

    stop_ = std::make_shared<std::atomic<bool>>(false);
    auto stopFlag = stop_;
    const int iterations = iterations_->value();
    const pipeline::TimingRequest request = session_->timingRequest(*analysis);
    const std::vector<std::string> workerCommand = session_->timingWorkerCommand();
    const QString unavailable = session_->tuneUnavailable();
    thread_ = QThread::create([this, analysis, stopFlag, iterations, serialThreads, schedule, request, workerCommand,
                               unavailable] {
        QString error;
        std::vector<double> profile;
        try {
            if (!unavailable.isEmpty())
                throw std::runtime_error(unavailable.toStdString());
            // Compiled here first: a model that cannot run says why before any worker starts.
            const PreparedModel& p = *analysis->prepared;
            std::unique_ptr<CompiledModel> model = runtime().compile(p.model);
            model->setInputs(pipeline::runInputs(p.model, *model, p.inputFiles, analysis->settings.batch, 1234));
            // Each configuration in its own process, in turns (as bench and Tune time them): in one
            // process they disturb each other. An iteration is shown once every row has its time.
            std::vector<pipeline::TimedConfiguration> configurations;
            for (int t : serialThreads)
                configurations.push_back({"serial", t, nullptr, {}});
            configurations.push_back({"plan", 1, &schedule, {}});
            std::vector<std::vector<double>> pending(configurations.size());
            int next = 0;
            auto onTime = [&](size_t row, double seconds) {
                pending[row].push_back(seconds);
                if (row + 1 < configurations.size())
                    return;
                for (size_t k = 0; k < pending.back().size(); ++k, ++next) {
                    RunIteration it;
                    it.index = next;
                    for (const auto& times : pending)
                        it.seconds.push_back(k < times.size() ? times[k] : std::nan(""));
                    QMetaObject::invokeMethod(this, [this, it] { onIteration(it); }, Qt::QueuedConnection);
                }
                for (auto& times : pending)
                    times.clear();
            };
            const HostState before = probeHost();
            pipeline::timeInOwnProcesses(request, configurations, workerCommand, iterations, 1, {},
                                         [&](double) { return stopFlag->load(); }, onTime);
            const HostState after = probeHost();
            QMetaObject::invokeMethod(
                this, [this, before, after] { host_.emplace(before, after); updateSummary(); },
                Qt::QueuedConnection);
            // Per-node costs (for "Use as measured costs") and the workers' busy times, in this
            // process, one executor at a time.
            if (!*stopFlag) {
                const MeasuredCosts m = profileNodes(*model, p.model.graph.nodeCount(), analysis->settings.batch,
                                                     std::clamp(iterations, 3, 10), 1);
                for (double seconds : m.nodeSeconds)
                    profile.push_back(seconds / analysis->settings.batch);
            }
            if (!*stopFlag) {
                const auto plan = model->parallelExecutor(schedule);
                plan->run();
                RunProfile planProfile;
                std::vector<double> busy;
                for (int i = 0; i < 3; ++i) {
                    plan->run(&planProfile);
                    busy.resize(planProfile.workerBusy.size(), 0);
                    for (size_t w = 0; w < planProfile.workerBusy.size(); ++w)
                        busy[w] += planProfile.workerBusy[w] / planProfile.totalSeconds / 3;
                }
                QMetaObject::invokeMethod(this, [this, busy] { onUtilization(busy); }, Qt::QueuedConnection);
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
    for (size_t row = 0; row < series_.size(); ++row)
        series_[row]->setPen(QPen(runSeriesColor(int(row)), 2));
    chart->setBackgroundBrush(palette().color(QPalette::Base));
    chart->setBackgroundRoundness(0);
}

void RunPanel::onIteration(const RunIteration& it)
{
    double maxMs = 0;
    for (size_t row = 0; row < it.seconds.size() && row < times_.size(); ++row) {
        times_[row].push_back(it.seconds[row]);
        series_[row]->append(it.index, it.seconds[row] * 1e3);
    }
    for (const auto& row : times_)
        for (double s : row)
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

void RunPanel::onUtilization(std::vector<double> busy)
{
    busy_ = std::move(busy);
    updateSummary();
}

void RunPanel::updateSummary()
{
    if (times_.empty() || times_.front().empty())
        return;
    const size_t rows = times_.size(), planRow = rows - 1;
    std::vector<double> medians;
    for (const auto& t : times_)
        medians.push_back(t.empty() ? std::nan("") : median(t));
    // The best serial row: the faster of the serial ones measured here.
    size_t best = 0;
    for (size_t r = 1; r < planRow; ++r)
        if (medians[r] < medians[best])
            best = r;
    const double one = medians[0], bestSerial = medians[best], plan = medians[planRow];
    auto times = [](double x) { return std::isfinite(x) ? QStringLiteral("%1x").arg(x, 0, 'f', 2) : QString(); };
    const int done = int(times_.front().size());
    QString text = (done == 1 ? tr("<b>1 iteration</b>") : tr("<b>%1 iterations</b>").arg(done)) +
                   tr(", each configuration in its own process, in turns");
    text += QStringLiteral("<table cellspacing='0' cellpadding='1'><tr><th align='left'>%1</th><th>&nbsp;%2</th>"
                           "<th>&nbsp;%3</th><th>&nbsp;%4</th></tr>")
                .arg(tr("configuration"), tr("median"), tr("vs 1 thread"), tr("vs best serial"));
    for (size_t r = 0; r < rows; ++r) {
        const bool strong = r == planRow;
        text += QStringLiteral("<tr><td>%1%2%3</td><td align='right'>&nbsp;%4</td><td align='right'>%5</td>"
                               "<td align='right'>%6</td></tr>")
                    .arg(strong ? QStringLiteral("<b>") : QString(), labels_[int(r)].toHtmlEscaped(),
                         strong ? QStringLiteral("</b>") : QString(), formatSeconds(medians[r]),
                         times(one / medians[r]), times(bestSerial / medians[r]));
    }
    text += QStringLiteral("</table>");
    const double speedup = one / plan;
    const double bound = runAnalysis_ ? runAnalysis_->bound : 0;
    const double simulated = runAnalysis_ ? runAnalysis_->plan.simulation.speedup : 0;
    const bool oneWorker = runAnalysis_ && runAnalysis_->plan.schedule.clusters.size() == 1;
    text += tr("The plan: <b>%1</b> over serial on 1 thread (inter-op bound %2, simulated %3); %4 over the best "
               "serial (%5).")
                .arg(times(speedup), times(bound), times(simulated), times(bestSerial / plan), labels_[int(best)]);
    // Why a figure is out of line with the plan's.
    if (runAnalysis_ && bound > 0 && speedup > bound * 1.001) {
        const Schedule& s = runAnalysis_->plan.schedule;
        text += QStringLiteral("<br>") +
                (s.maxThreads() > 1
                     ? tr("Above the inter-op bound: the workers use intra-op threads (%1), which the inter-op "
                          "bound does not count.")
                           .arg(QString::fromStdString(describeThreads(s)))
                     : tr("Above the inter-op bound: the costs it is computed from (%1) misjudge some nodes, or "
                          "the serial runs were slowed by other work on the machine.")
                           .arg(runAnalysis_->costs.measured ? tr("measured") : tr("static estimates")));
    }
    if (simulated > 0 && plan > 1.3 * one / simulated)
        text += QStringLiteral("<br>") +
                tr("%1 % slower than simulated (against serial on 1 thread): %2")
                    .arg(qRound(100 * (plan / (one / simulated) - 1)))
                    .arg(oneWorker ? tr("the machine is busy.")
                                   : tr("the machine is busy or hand-offs cost more than modelled."));
    if (planRow > 1 && medians[1] > medians[0])
        text += QStringLiteral("<br>") +
                (host_ && roundTripMoved(host_->first, host_->second)
                     ? tr("Serial on %1 is slower than on one thread: the host moved its CPUs during the runs "
                          "(below), or the machine is busy, or this model's operators are too small to gain "
                          "from more threads.")
                     : tr("Serial on %1 is slower than on one thread: the machine is busy (another process takes "
                          "a core), or this model's operators are too small to gain from more threads."))
                    .arg(labels_[1].section(QStringLiteral(", "), 1));
    if (host_)
        text += QStringLiteral("<br>") +
                QString::fromStdString(describeHostAround(host_->first, host_->second)).toHtmlEscaped();
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
    for (size_t k = 0; k < busy_.size(); ++k)
        w << tr("W%1 busy %2%").arg(k).arg(100.0 * busy_[k], 0, 'f', 0);
    workers_->setText(busy_.empty() ? QString()
                                    : tr("Worker utilization (the plan, 3 runs in this process): ") +
                                          w.join(QStringLiteral(", ")));
    Q_EMIT runFigures({{tr("Serial, 1 thread (median)"), formatSeconds(one)},
                       {tr("Best serial (median)"), formatSeconds(bestSerial) + " (" + labels_[int(best)] + ")"},
                       {tr("The plan (median)"), formatSeconds(plan) + " (" + labels_[int(planRow)] + ")"},
                       {tr("Speedup over serial, 1 thread"), QString::number(speedup, 'f', 3)},
                       {tr("Speedup over the best serial"), QString::number(bestSerial / plan, 'f', 3)},
                       {tr("Inter-op bound"), QString::number(bound, 'f', 3)},
                       {tr("Iterations"), QString::number(times_.front().size())}});
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
