#include "tune_panel.h"

#include "metric_rows.h"

#include "core/report/host_report.h"

#include <QDoubleSpinBox>
#include <QEvent>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ramiel::studio {

namespace {

QString times(double x) { return QStringLiteral("%1x").arg(x, 0, 'f', 2); }

}  // namespace

TunePanel::TunePanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), budget_(new QDoubleSpinBox(this)),
      tuneButton_(new QPushButton(tr("Tune"), this)), cancelButton_(new QPushButton(tr("Cancel"), this)),
      applyButton_(new QPushButton(tr("Apply Row"), this)), progress_(new QProgressBar(this)),
      status_(new QLabel(this)), verdict_(new QLabel(this)), table_(new QTableWidget(this))
{
    budget_->setRange(1, 3600);
    budget_->setDecimals(0);
    budget_->setValue(30);
    budget_->setSuffix(tr(" s budget"));
    budget_->setToolTip(tr("Seconds for profiling and measuring together"));
    tuneButton_->setToolTip(tr("Profile every node on 1..P threads, simulate every configuration at the Tuning "
                               "panel's P and B, measure the best each in its own process, pick the fastest"));
    cancelButton_->setEnabled(false);
    applyButton_->setEnabled(false);
    applyButton_->setToolTip(tr("Show the selected configuration: its settings, passes, schedule and threads "
                                "(double-click a row does the same)"));
    progress_->setTextVisible(true);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(QString());
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    table_->setColumnCount(Columns);
    table_->setHorizontalHeaderLabels({tr("configuration"), tr("workers x threads"), tr("simulated"), tr("measured"),
                                       tr("p25-p75"), tr("vs serial 1 thread"), tr("vs best serial")});
    table_->horizontalHeaderItem(Simulated)->setToolTip(tr("Thread-aware simulation with the profiled costs"));
    table_->horizontalHeaderItem(Measured)->setToolTip(tr("Median of the timed runs, each configuration in its "
                                                          "own process, in turns"));
    table_->horizontalHeaderItem(VsOneThread)->setToolTip(tr("Speedup over serial on one thread (measured)"));
    table_->horizontalHeaderItem(VsBestSerial)->setToolTip(
        tr("Speedup over the fastest measured serial configuration"));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setAlternatingRowColors(true);

    // Controls in a row, the summary and verdict under them, the table filling the rest.
    auto* controls = new QHBoxLayout;
    controls->addWidget(budget_);
    controls->addWidget(tuneButton_);
    controls->addWidget(cancelButton_);
    controls->addWidget(progress_, 1);
    controls->addWidget(applyButton_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(verdict_);
    layout->addWidget(table_, 1);

    connect(tuneButton_, &QPushButton::clicked, this, &TunePanel::start);
    connect(cancelButton_, &QPushButton::clicked, this, &TunePanel::cancel);
    connect(applyButton_, &QPushButton::clicked, this, [this] { applyRow(table_->currentRow()); });
    connect(table_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { applyRow(row); });
    connect(table_, &QTableWidget::currentCellChanged, this,
            [this](int row) { applyButton_->setEnabled(result_ && row >= 0 && !running_); });
    // A result belongs to its model file: another file drops it (other passes keep it).
    connect(session_, &StudioSession::modelChanged, this, [this] {
        auto p = session_->prepared();
        if (result_ && !running_ && (!p || p->path != result_->model)) {
            result_.reset();
            showResult();
        }
    });
    status_->setText(tr("Searches the ways to run the model on the Tuning panel's P cores at batch B: serial on "
                        "each thread count, every scheduler with its threads per worker, with and without the "
                        "passes. Each of the best is measured in its own process."));
}

TunePanel::~TunePanel()
{
    cancel();
    if (auto* w = findChild<QFutureWatcher<TuneOutcome>*>())
        w->waitForFinished();
}

void TunePanel::setRunning(bool running)
{
    running_ = running;
    tuneButton_->setEnabled(!running);
    budget_->setEnabled(!running);
    cancelButton_->setEnabled(running);
    applyButton_->setEnabled(!running && result_ && table_->currentRow() >= 0);
}

void TunePanel::start()
{
    if (running_)
        return;
    const QString unavailable = session_->tuneUnavailable();
    if (!unavailable.isEmpty()) {
        status_->setText(unavailable);
        Q_EMIT finished(false, unavailable);
        return;
    }
    result_.reset();
    showResult();
    cancelled_ = std::make_shared<std::atomic<bool>>(false);
    setRunning(true);
    const PlanSettings& s = session_->settings();
    status_->setText(tr("Tuning for P = %1, B = %2 within %3 s: loading libtorch and profiling...")
                         .arg(s.cores())
                         .arg(s.batch)
                         .arg(budget_->value()));
    progress_->setRange(0, 0);
    progress_->setFormat(QString());
    auto progress = [this](const std::string& stage, int done, int total) {
        const QString text = QString::fromStdString(stage);
        QMetaObject::invokeMethod(this, [this, text, done, total] { onProgress(text, done, total); },
                                  Qt::QueuedConnection);
    };
    auto* watcher = new QFutureWatcher<TuneOutcome>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        onDone(watcher->result());
    });
    watcher->setFuture(session_->tuneAsync(budget_->value(), cancelled_, progress));
}

void TunePanel::cancel()
{
    if (!running_ || !cancelled_)
        return;
    *cancelled_ = true;
    cancelButton_->setEnabled(false);
    status_->setText(tr("Cancelling: stopping the timing processes..."));
}

void TunePanel::onProgress(const QString& stage, int done, int total)
{
    if (!running_)
        return;
    progress_->setRange(0, std::max(1, total));
    progress_->setValue(done);
    progress_->setFormat(tr("%1 %2/%3").arg(stage).arg(done).arg(total));
    if (!*cancelled_)
        status_->setText(stage == QLatin1String("measuring")
                             ? tr("Measuring the best configurations, each in its own process, in turns")
                             : tr("Profiling every node on each thread count"));
    Q_EMIT progressed(stage, done, total);
}

void TunePanel::onDone(const TuneOutcome& outcome)
{
    setRunning(false);
    progress_->setRange(0, 1);
    progress_->setValue(outcome.result ? 1 : 0);
    progress_->setFormat(outcome.result ? tr("done") : QString());
    if (outcome.cancelled) {
        status_->setText(tr("Cancelled; the timing processes are stopped."));
        Q_EMIT finished(false, tr("cancelled"));
        return;
    }
    if (!outcome.result) {
        status_->setText(tr("Tune failed: %1").arg(outcome.error));
        Q_EMIT finished(false, outcome.error);
        return;
    }
    result_ = outcome.result;
    showResult();
    Q_EMIT finished(true, {});
}

void TunePanel::showResult()
{
    table_->setRowCount(0);
    verdict_->clear();
    verdict_->hide();
    applyButton_->setEnabled(false);
    if (!result_)
        return;
    const pipeline::TuneResult& r = *result_;
    int measured = 0;
    for (const auto& c : r.candidates)
        measured += c.measuredAlone();
    status_->setText(tr("P = %1, B = %2: %3 configurations simulated, %4 measured (%5 runs each, each in its own "
                        "process, in turns) in %6 s (profiling %7 s).")
                         .arg(r.cores)
                         .arg(r.batch)
                         .arg(r.candidates.size())
                         .arg(measured)
                         .arg(r.runsEach)
                         .arg(r.totalSeconds, 0, 'f', 1)
                         .arg(r.profileSeconds, 0, 'f', 1) +
                     QStringLiteral("\n") +
                     QString::fromStdString(describeHostAround(r.hostBefore, r.hostAfter)));
    QString verdict = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(r.verdict).toHtmlEscaped());
    if (!r.note.empty())
        verdict += QStringLiteral("<br>") + tr("Note: %1").arg(QString::fromStdString(r.note).toHtmlEscaped());
    verdict_->setText(verdict);
    verdict_->show();
    const double one = r.candidates[r.serialOneThread].median(), best = r.candidates[r.bestSerial].median();
    table_->setRowCount(int(r.candidates.size()));
    const QColor dim = palette().color(QPalette::PlaceholderText);
    for (size_t i = 0; i < r.candidates.size(); ++i) {
        const pipeline::TuneCandidate& c = r.candidates[i];
        QStringList cells(Columns);
        cells[Configuration] = (i == r.chosen ? QStringLiteral("\u2605 ") : QStringLiteral("   ")) +
                               QString::fromStdString(c.config.title());
        cells[Threads] = QString::fromStdString(c.config.threadsText());
        cells[Simulated] = formatSeconds(c.simulated);
        if (c.measuredAlone()) {
            std::vector<double> s = c.measured;
            std::sort(s.begin(), s.end());
            cells[Measured] = formatSeconds(c.median());
            cells[Spread] = formatSeconds(s[s.size() / 4]) + QStringLiteral(" - ") + formatSeconds(s[s.size() * 3 / 4]);
            cells[VsOneThread] = times(one / c.median());
            cells[VsBestSerial] = times(best / c.median());
        } else {
            cells[Measured] = tr("not measured");
        }
        QString tip;
        if (i == r.chosen)
            tip = tr("Chosen: the fastest measured configuration");
        else if (i == r.serialOneThread)
            tip = tr("The reference: serial on one thread");
        else if (i == r.bestSerial)
            tip = tr("The fastest measured serial configuration");
        for (int col = 0; col < Columns; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col >= Simulated)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (i == r.chosen) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            if (!c.measuredAlone())
                item->setForeground(dim);
            if (!tip.isEmpty())
                item->setToolTip(tip);
            table_->setItem(int(i), col, item);
        }
    }
    table_->selectRow(int(r.chosen));
}

void TunePanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    // The unmeasured rows' dim color follows the light or dark palette.
    if (event->type() == QEvent::PaletteChange && result_) {
        const int row = table_->currentRow();
        showResult();
        if (row >= 0)
            table_->selectRow(row);
    }
}

void TunePanel::applyRow(int row)
{
    if (!result_ || running_ || row < 0 || size_t(row) >= result_->candidates.size())
        return;
    const pipeline::RunConfig& config = result_->candidates[size_t(row)].config;
    auto p = session_->prepared();
    if (!p || p->path != result_->model) {
        status_->setText(tr("That result is of %1, not of the open model.").arg(QString::fromStdString(result_->model)));
        return;
    }
    table_->selectRow(row);  // the row shown is the row selected, however it was applied
    session_->showConfig(config);
}

}  // namespace ramiel::studio
