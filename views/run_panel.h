// Runs the open model on libtorch from a background thread, each configuration
// in its own process, in turns: serial on one thread, serial on P threads (the
// best serial guess) and the current schedule, with a live chart of each
// iteration's latency, running medians, the speedups over both serial rows
// beside the plan's inter-op bound, the host's state around the runs, and
// per-worker utilization. The 1-thread runs' per-node profile can become the
// measured costs in one click.
#pragma once

#include "studio_session.h"

#include "core/analysis/host_state.h"

#include <QList>
#include <QStringList>
#include <QPair>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>
#include <utility>
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
    std::vector<double> seconds;  // by row: serial 1 thread, [serial P threads,] the plan
};

class RunPanel : public QWidget {
    Q_OBJECT
public:
    explicit RunPanel(StudioSession* session, QWidget* parent = nullptr);
    ~RunPanel() override;

    QSpinBox* iterationsBox() const { return iterations_; }
    bool running() const { return thread_ != nullptr; }
    int serialPoints() const;    // serial on one thread
    int parallelPoints() const;  // the plan
    // The rows measured, in order: "serial, 1 worker x 1 thread", ..., the plan's label.
    QStringList rowLabels() const { return labels_; }
    bool hasProfile() const { return !profile_.empty(); }
    QLabel* summaryLabel() const { return summary_; }
    QLabel* workersLabel() const { return workers_; }
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
    void onUtilization(std::vector<double> busy);
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
    std::vector<QLineSeries*> series_;  // by row
    QValueAxis* xAxis_;
    QValueAxis* yAxis_;
    QThread* thread_ = nullptr;
    std::shared_ptr<std::atomic<bool>> stop_;
    QStringList labels_;
    std::vector<std::vector<double>> times_;  // by row
    std::vector<double> busy_;  // by worker of the plan: the share of a run it computes
    std::optional<std::pair<HostState, HostState>> host_;  // before and after the timed runs
    std::vector<double> profile_;  // per-sample seconds by node id, from the serial runs
    std::shared_ptr<const PlannedModel> runAnalysis_;
};

}  // namespace ramiel::studio
