// The document behind every Studio view: the open model and what is derived
// from it. Loading, layout and scheduling run off the UI thread; the results
// are immutable snapshots that views read after the change signals. A newer
// request supersedes an older one (its result is dropped), which is also how
// Cancel works.
#pragma once

#include "core/analysis/cost_model.h"
#include "core/analysis/machine.h"
#include "core/analysis/metrics.h"
#include "core/ir/model.h"
#include "core/ir/topology.h"
#include "core/layout/dot_layout.h"
#include "core/passes/registry.h"
#include "core/schedule/scheduler.h"
#include "display_graph.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ramiel::studio {

struct ScheduleSettings {
    std::string algorithm = "linear";
    int workers = 2;
    int batch = 1;
    int degree = 1;
    bool clone = true;
    bool measuredCosts = false;  // use the last run's profile (falls back to static per node)

    bool operator==(const ScheduleSettings& o) const
    {
        return algorithm == o.algorithm && workers == o.workers && batch == o.batch && degree == o.degree &&
               clone == o.clone && measuredCosts == o.measuredCosts;
    }
    bool operator!=(const ScheduleSettings& o) const { return !(*this == o); }
};

// A model ready for analysis: the graph after the passes, its topology and
// static costs. The model as read is kept so passes can be toggled without
// reading the file again.
struct PreparedModel {
    QString path;
    std::shared_ptr<const Model> source;  // as read from the file
    std::vector<std::string> passes;      // the model passes run, in table order
    std::vector<std::pair<std::string, passes::PassStats>> passStats;
    Model model;
    Topology topo;
    MachineConstants machine;
    std::vector<NodeCost> staticCosts;
    std::vector<double> staticSeconds;  // by node id, one sample
    double readSeconds = 0;             // import, shape inference, checks
    double loadSeconds = 0;             // passes, topology, costs
};

// The graph as drawn: display items and their Graphviz layout.
struct GraphLayout {
    DisplayGraph display;
    Layout layout;
    bool leftToRight = false;
    double seconds = 0;
};

// A schedule of the prepared model and everything shown about it.
struct Analysis {
    std::shared_ptr<const PreparedModel> prepared;  // keeps the topology the costs point at alive
    ScheduleSettings settings;
    std::unique_ptr<CostTable> costs;
    bool measured = false;           // costs came from a run's profile
    std::vector<double> nodeSeconds;  // by node id at one sample: the costs in use
    GraphMetrics metrics;
    Plan plan;
    std::vector<double> loads;                   // by cluster
    // By graph copy (d of them), then node id: the owner cluster, the clones
    // in other clusters, and the cross-cluster edges by node pair.
    std::vector<std::vector<int>> clusterOfNode;
    std::vector<std::vector<int>> cloneCount;
    std::vector<std::set<std::pair<NodeId, NodeId>>> crossClusterEdges;
    std::set<std::pair<NodeId, NodeId>> criticalEdges;
    std::vector<bool> onCriticalPath;            // by node id
    double seconds = 0;                          // time to compute this
};

// Throws Error(Usage) for settings the problem rejects (d > B, ...).
std::shared_ptr<const Analysis> analyze(std::shared_ptr<const PreparedModel> prepared,
                                        const ScheduleSettings& settings,
                                        const std::vector<double>& measuredSeconds = {});
// Reads a model (the slow part of opening a file).
std::shared_ptr<const Model> readModel(const QString& path);
// Runs the passes on a copy of `source` and prepares it for analysis.
std::shared_ptr<const PreparedModel> prepareModel(const QString& path, std::shared_ptr<const Model> source,
                                                  const std::vector<std::string>& passes,
                                                  const QString& machineFile = {}, double readSeconds = 0);
// The model passes on by default in the registry (the GUI's starting set).
std::vector<std::string> defaultModelPasses();
std::shared_ptr<const GraphLayout> layoutModel(const PreparedModel& prepared, bool leftToRight, bool showNames);

class StudioSession : public QObject {
    Q_OBJECT
public:
    explicit StudioSession(QObject* parent = nullptr);
    ~StudioSession() override;

    // Machine constants for the cost model (a JSON file); empty: this machine's.
    void setMachineFile(const QString& path) { machineFile_ = path; }

    void open(const QString& path);
    // Drops the request in flight; the previous model (if any) stays.
    void cancel();
    void setSettings(const ScheduleSettings& settings);
    void setLayoutOptions(bool leftToRight, bool showNames);
    // The model passes to run (registry names; requirements are added). Re-runs
    // them on the model as read, then layout and scheduling, off the UI thread.
    void setPasses(const std::vector<std::string>& names);
    const std::vector<std::string>& passes() const { return passes_; }
    // Per-sample seconds by node id from a run's profile; enables measured costs.
    void setMeasuredSeconds(std::vector<double> seconds);
    // Schedules the current model with other settings (for Compare).
    QFuture<std::shared_ptr<const Analysis>> analyzeAsync(const ScheduleSettings& settings) const;

    bool busy() const { return busy_; }
    const ScheduleSettings& settings() const { return settings_; }
    bool leftToRight() const { return leftToRight_; }
    bool showNames() const { return showNames_; }
    bool hasMeasuredCosts() const { return !measured_.empty(); }
    std::shared_ptr<const PreparedModel> prepared() const { return prepared_; }
    std::shared_ptr<const GraphLayout> layout() const { return layout_; }
    std::shared_ptr<const Analysis> analysis() const { return analysis_; }

Q_SIGNALS:
    void busyChanged(bool busy, const QString& stage);
    void modelChanged();     // a new model and layout (rebuild the scene)
    void layoutChanged();    // same model, new layout
    void analysisChanged();  // new schedule and metrics (recolor)
    void settingsChanged();
    void failed(const QString& path, const QString& message);

private:
    struct Opened;
    void setBusy(bool busy, const QString& stage = {});
    void prepareAsync(const QString& path, std::shared_ptr<const Model> source);
    void runAnalysis();

    QString machineFile_;
    ScheduleSettings settings_;
    bool leftToRight_ = false;
    bool showNames_ = false;
    std::vector<double> measured_;
    std::vector<std::string> passes_ = defaultModelPasses();
    std::shared_ptr<const PreparedModel> prepared_;
    std::shared_ptr<const GraphLayout> layout_;
    std::shared_ptr<const Analysis> analysis_;
    bool busy_ = false;
    int openGeneration_ = 0;
    int analysisGeneration_ = 0;
    int layoutGeneration_ = 0;
};

}  // namespace ramiel::studio
