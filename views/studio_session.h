// The document behind every Studio view: the open model and what is derived
// from it. Loading, layout and scheduling run off the UI thread; the results
// are immutable snapshots that views read after the change signals. A newer
// request supersedes an older one (its result is dropped), which is also how
// Cancel works.
#pragma once

#include "core/layout/dot_layout.h"
#include "core/pipeline/isolated_timing.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/run_config.h"
#include "core/pipeline/tune.h"
#include "display_graph.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ramiel::studio {

// Studio works on the core pipeline's results (core/pipeline/pipeline.h).
using pipeline::PlannedModel;
using pipeline::PlanSettings;
using pipeline::PreparedModel;
using pipeline::TeachingSteps;

// The graph as drawn: display items and their Graphviz layout.
struct GraphLayout {
    DisplayGraph display;
    Layout layout;
    bool leftToRight = false;
    double seconds = 0;
};

// What a tune run gives back: a result, or an error, or neither (cancelled).
struct TuneOutcome {
    std::shared_ptr<const pipeline::TuneResult> result;
    QString error;
    bool cancelled = false;
};

// The model passes on by default in the registry (the GUI's starting set).
std::vector<std::string> defaultModelPasses();
std::shared_ptr<const GraphLayout> layoutModel(const PreparedModel& prepared, bool leftToRight, bool showNames,
                                               const std::vector<std::string>& collapsed = {});

class StudioSession : public QObject {
    Q_OBJECT
public:
    explicit StudioSession(QObject* parent = nullptr);
    ~StudioSession() override;

    // Machine constants for the cost model (a JSON file); empty: this machine's.
    void setMachineFile(const QString& path) { machineFile_ = path; }

    // Opens a model; `inputShapes` (NAME=d1,d2,...) fix inputs with symbolic or unknown sizes,
    // `inputFiles` (NAME=FILE.npy) give inputs their data (as setInputs).
    void open(const QString& path, const std::vector<std::string>& inputShapes = {},
              const std::vector<std::string>& inputFiles = {});
    // Reads the open model again with other input sizes (then passes, layout, plan) and
    // other input data: `inputFiles` (NAME=FILE.npy) for the inputs runs read from files
    // (Run, Tune, measured costs), random data for the others.
    void setInputs(const std::vector<std::string>& inputShapes, const std::vector<std::string>& inputFiles = {});
    // The input sizes the open model was read with.
    const std::vector<std::string>& inputShapes() const { return inputShapes_; }
    // The inputs its runs read from files.
    const std::vector<std::string>& inputFiles() const { return inputFiles_; }
    // Opens a model with a run configuration applied (`ramiel tune -o`, Studio's --config).
    void openWithConfig(const QString& path, const pipeline::RunConfig& config);
    // Shows a configuration of the open model: its settings and passes, and its
    // own schedule (threads included) instead of a planned one, simulated with
    // the costs in use. Any later change of settings, passes or sizes plans again.
    void showConfig(const pipeline::RunConfig& config);
    // The configuration shown instead of a plan, if any.
    const std::optional<pipeline::RunConfig>& shownConfig() const { return config_; }
    // The program that serves `time-worker REQUEST.json` for Tune: `ramiel`
    // beside this executable unless set.
    QString tuneWorkerProgram() const;
    // What Run's timing workers load for `analysis`: its model file, the sizes and passes it
    // was prepared with, its batch.
    pipeline::TimingRequest timingRequest(const PlannedModel& analysis) const;
    // The command that serves one timed configuration (tuneWorkerProgram() time-worker).
    std::vector<std::string> timingWorkerCommand() const;
    void setTuneWorkerProgram(const QString& path) { tuneWorker_ = path; }
    // Why Tune cannot start (no model, no worker program); empty when it can.
    QString tuneUnavailable() const;
    // The tuner (core/pipeline/tune.h) on the open model, off the UI thread, at
    // the current P, B, passes (and no passes) and input sizes. `progress` is
    // called on the worker thread; `cancelled` stops it (and its worker processes).
    QFuture<TuneOutcome> tuneAsync(double budgetSeconds, std::shared_ptr<std::atomic<bool>> cancelled,
                                   pipeline::TuneProgress progress) const;
    // Drops the request in flight; the previous model (if any) stays.
    void cancel();
    // settings.costs: "static", or "measured" for the last run's profile (static where there is none).
    void setSettings(const PlanSettings& settings);
    void setLayoutOptions(bool leftToRight, bool showNames);
    // Modules (node-name prefixes such as "/features/denseblock1/") drawn as one
    // box each; lays the graph out again. Opening another model clears them.
    void setCollapsedModules(std::vector<std::string> modules);
    const std::vector<std::string>& collapsedModules() const { return collapsed_; }
    // The model passes to run (registry names; requirements are added). Re-runs
    // them on the model as read, then layout and scheduling, off the UI thread.
    void setPasses(const std::vector<std::string>& names);
    const std::vector<std::string>& passes() const { return passes_; }
    // Per-sample seconds by node id from a run's profile; enables measured costs.
    void setMeasuredSeconds(std::vector<double> seconds);
    // Plans the current model with other settings (for Compare); null on failure.
    QFuture<std::shared_ptr<const PlannedModel>> planAsync(const PlanSettings& settings) const;
    // Linear clustering step by step for the current plan (for Teaching).
    QFuture<std::shared_ptr<const TeachingSteps>> teachingStepsAsync() const;

    bool busy() const { return busy_; }
    const PlanSettings& settings() const { return settings_; }
    bool leftToRight() const { return leftToRight_; }
    bool showNames() const { return showNames_; }
    bool hasMeasuredCosts() const { return !measured_.empty(); }
    std::shared_ptr<const PreparedModel> prepared() const { return prepared_; }
    std::shared_ptr<const GraphLayout> layout() const { return layout_; }
    std::shared_ptr<const PlannedModel> analysis() const { return analysis_; }

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
    void prepareAsync(const QString& path, std::shared_ptr<const Model> source,
                      const std::vector<std::string>& inputShapes, const std::vector<std::string>& inputFiles = {});
    void runAnalysis();
    void relayout();

    std::optional<pipeline::RunConfig> config_;
    QString tuneWorker_;
    QString machineFile_;
    PlanSettings settings_;
    bool leftToRight_ = false;
    bool showNames_ = false;
    std::vector<double> measured_;
    std::vector<std::string> inputShapes_;
    std::vector<std::string> inputFiles_;
    std::vector<std::string> collapsed_;
    std::vector<std::string> passes_ = defaultModelPasses();
    std::shared_ptr<const PreparedModel> prepared_;
    std::shared_ptr<const GraphLayout> layout_;
    std::shared_ptr<const PlannedModel> analysis_;
    bool busy_ = false;
    int openGeneration_ = 0;
    int analysisGeneration_ = 0;
    int layoutGeneration_ = 0;
};

}  // namespace ramiel::studio
