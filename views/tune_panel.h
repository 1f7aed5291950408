// Tune: the measured search of core/pipeline/tune.h on the open model, off
// the UI thread, with progress and Cancel; the ranked table (simulated and
// measured times, speedups over serial on one thread and over the best
// serial configuration), the chosen row marked, the verdict, and Apply, which
// shows a row's exact configuration (settings, passes, schedule and threads).
#pragma once

#include "studio_session.h"

#include <QWidget>

#include <atomic>
#include <memory>

class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace ramiel::studio {

class TunePanel : public QWidget {
    Q_OBJECT
public:
    enum Column { Configuration, Threads, Simulated, Measured, Spread, VsOneThread, VsBestSerial, Columns };

    explicit TunePanel(StudioSession* session, QWidget* parent = nullptr);
    ~TunePanel() override;

    QDoubleSpinBox* budgetBox() const { return budget_; }
    QPushButton* tuneButton() const { return tuneButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QPushButton* applyButton() const { return applyButton_; }
    QProgressBar* progressBar() const { return progress_; }
    QTableWidget* table() const { return table_; }
    QLabel* statusLabel() const { return status_; }
    QLabel* verdictLabel() const { return verdict_; }
    bool running() const { return running_; }
    std::shared_ptr<const pipeline::TuneResult> result() const { return result_; }

public Q_SLOTS:
    void start();
    void cancel();
    // Shows candidate `row` of the result (the table's order) in the session.
    void applyRow(int row);

Q_SIGNALS:
    void progressed(const QString& stage, int done, int total);
    // ok: a result is shown; else `message` says why not (cancelled or failed).
    void finished(bool ok, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    void setRunning(bool running);
    void onProgress(const QString& stage, int done, int total);
    void onDone(const TuneOutcome& outcome);
    void showResult();

    StudioSession* session_;
    QDoubleSpinBox* budget_;
    QPushButton* tuneButton_;
    QPushButton* cancelButton_;
    QPushButton* applyButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* verdict_;
    QTableWidget* table_;
    bool running_ = false;
    std::shared_ptr<std::atomic<bool>> cancelled_;
    std::shared_ptr<const pipeline::TuneResult> result_;
};

}  // namespace ramiel::studio
