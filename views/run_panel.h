// Runs the open model on libtorch, serial (one thread) and parallel (the
// current schedule) interleaved, in a background thread, with a live chart
// of each iteration's latency, running medians, the speedup and per-worker
// utilization. The serial runs' per-node profile can become the measured
// costs in one click.
#pragma once

#include "studio_session.h"

#include <QList>
#include <QPair>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QLabel;
class QLineSeries;
class QPushButton;
class QSpinBox;
class QChartView;
class QValueAxis;
class QThread;

namespace ramiel::studio {

struct RunIteration {
    int index = 0;
    double serialSeconds = 0;
    double parallelSeconds = 0;
    std::vector<double> workerBusy;
    std::vector<double> workerWait;
};

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(StudioSession* session, QWidget* parent = nullptr);
    ~RunPanel() override;

    QSpinBox* iterationsBox() const { return iterations_; }
    bool running() const { return thread_ != nullptr; }
    int serialPoints() const;
    int parallelPoints() const;
    bool hasProfile() const { return !profile_.empty(); }
    QLabel* summaryLabel() const { return summary_; }
    QChartView* chartView() const { return chart_; }

public Q_SLOTS:
    void start();
    void stop();
    void useProfile();

Q_SIGNALS:
    void runFigures(const QList<QPair<QString, QString>>& figures);
    void finished(bool ok, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    void onIteration(const RunIteration& it);
    // Drops the last run's results (another model is open).
    void clearResults();
    void onDone(const QString& error, std::vector<double> profile);
    void updateSummary();
    void applyChartTheme();

    StudioSession* session_;
    QSpinBox* iterations_;
    QPushButton* runButton_;
    QPushButton* stopButton_;
    QPushButton* profileButton_;
    QLabel* summary_;
    QLabel* workers_;
    QChartView* chart_;
    QLineSeries* serial_;
    QLineSeries* parallel_;
    QValueAxis* xAxis_;
    QValueAxis* yAxis_;
    QThread* thread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> stop_;
    std::vector<double> serialTimes_, parallelTimes_;
    std::vector<double> busy_, wait_;
    std::vector<double> profile_;  // per-sample seconds by node id, from the serial runs
    std::shared_ptr<const PlannedModel> runAnalysis_;
};

}  // namespace ramiel::studio
