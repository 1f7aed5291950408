#include "studio_session.h"

#include "graph_items.h"

#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace ramiel::studio {

std::vector<std::string> defaultModelPasses() { return passes::parsePassList(pipeline::kDefaultPasses); }

std::shared_ptr<const GraphLayout> layoutModel(const PreparedModel& prepared, bool leftToRight, bool showNames,
                                               const std::vector<std::string>& collapsed)
{
    QElapsedTimer timer;
    timer.start();
    auto l = std::make_shared<GraphLayout>();
    // Boxes as wide as their labels in the scene's fonts (QFontMetricsF works off the UI thread).
    LabelWidths widths;
    widths.title = [](const std::string& t) { return double(titleTextWidth(QString::fromStdString(t), true)); };
    widths.subtitle = [](const std::string& t) { return double(subtitleTextWidth(QString::fromStdString(t))); };
    l->display = displayGraphOf(prepared.model.graph, showNames, widths, collapsed);
    l->layout = layoutWithDot(layoutInputOf(l->display, leftToRight));
    l->leftToRight = leftToRight;
    l->seconds = double(timer.nsecsElapsed()) * 1e-9;
    return l;
}

namespace {

// A plan with Studio's costs: "measured" is the last run's profile, static while there is none.
// With a configuration: its own schedule, simulated with those costs.
std::shared_ptr<const PlannedModel> planWith(std::shared_ptr<const PreparedModel> prepared,
                                             const PlanSettings& settings, const std::vector<double>& profile,
                                             const std::optional<pipeline::RunConfig>& config = {})
{
    PlanSettings costs = settings;
    if (costs.costs != "measured" || profile.size() != prepared->model.graph.nodeCount())
        costs.costs = "static";
    if (config)
        return pipeline::planWithSchedule(prepared, settings, pipeline::costTable(*prepared, costs, profile),
                                          pipeline::scheduleFor(*config, *prepared, config->label()));
    return pipeline::plan(prepared, settings, pipeline::costTable(*prepared, costs, profile));
}

// Pass names as a --passes list ("none" first, so an empty choice runs nothing).
std::string passList(const std::vector<std::string>& names)
{
    std::string list = "none";
    for (const std::string& n : names)
        list += "," + n;
    return list;
}

// A run configuration's --passes spec as Studio's pass names.
std::vector<std::string> passNamesOf(const std::string& spec) { return passes::parsePassList(spec); }

pipeline::PrepareOptions prepareOptions(const std::vector<std::string>& passNames, const QString& machineFile)
{
    pipeline::PrepareOptions o;
    o.passes = passList(passNames);
    o.machineFile = machineFile.toStdString();
    return o;
}

}  // namespace

// What an open request produces.
struct StudioSession::Opened {
    std::shared_ptr<const PreparedModel> prepared;
    std::shared_ptr<const GraphLayout> layout;
    std::shared_ptr<const PlannedModel> analysis;
    std::vector<std::string> inputShapes;
    std::vector<std::string> inputFiles;
    QString error;
};

namespace {

QString messageOf(const std::exception& e) { return QString::fromStdString(e.what()); }

template <typename T, typename F>
QFutureWatcher<T>* watch(QObject* owner, QFuture<T> future, F onDone)
{
    auto* watcher = new QFutureWatcher<T>(owner);
    QObject::connect(watcher, &QFutureWatcherBase::finished, owner, [watcher, onDone] {
        watcher->deleteLater();
        onDone(watcher->result());
    });
    watcher->setFuture(future);
    return watcher;
}

}  // namespace

StudioSession::StudioSession(QObject* parent) : QObject(parent) { settings_.workers = settings_.cores(); }

StudioSession::~StudioSession()
{
    // Workers post results to this object: let them finish first.
    for (auto* w : findChildren<QFutureWatcherBase*>())
        w->waitForFinished();
}

void StudioSession::setBusy(bool busy, const QString& stage)
{
    busy_ = busy;
    Q_EMIT busyChanged(busy, stage);
}

void StudioSession::open(const QString& path, const std::vector<std::string>& inputShapes,
                         const std::vector<std::string>& inputFiles)
{
    // Modules collapsed in one model mean nothing in another.
    if (!prepared_ || QFileInfo(path).absoluteFilePath() != QFileInfo(QString::fromStdString(prepared_->path)).absoluteFilePath())
        collapsed_.clear();
    config_.reset();
    prepareAsync(path, nullptr, inputShapes, inputFiles);
}

void StudioSession::openWithConfig(const QString& path, const pipeline::RunConfig& config)
{
    config_ = config;
    passes_ = passNamesOf(config.passes);
    PlanSettings s = pipeline::planSettingsOf(config);
    s.costs = "static";  // a new model has no run profile
    settings_ = s;
    Q_EMIT settingsChanged();
    prepareAsync(path, nullptr, config.shapes);
}

void StudioSession::showConfig(const pipeline::RunConfig& config)
{
    if (!prepared_)
        return;
    config_ = config;
    PlanSettings s = pipeline::planSettingsOf(config);
    s.costs = settings_.costs;  // the costs in use stay
    settings_ = s;
    const std::vector<std::string> names = passNamesOf(config.passes);
    const bool samePasses = names == passes_;
    passes_ = names;
    Q_EMIT settingsChanged();
    if (samePasses)
        runAnalysis();
    else
        prepareAsync(QString::fromStdString(prepared_->path), prepared_->source, inputShapes_, inputFiles_);
}

QString StudioSession::tuneWorkerProgram() const
{
    return tuneWorker_.isEmpty() ? QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("ramiel"))
                                 : tuneWorker_;
}

std::vector<std::string> StudioSession::timingWorkerCommand() const
{
    return {tuneWorkerProgram().toStdString(), "time-worker"};
}

pipeline::TimingRequest StudioSession::timingRequest(const PlannedModel& analysis) const
{
    pipeline::TimingRequest r;
    r.model = analysis.prepared->path;
    r.prepare = prepareOptions(analysis.prepared->passes, machineFile_);
    r.prepare.shapes = inputShapes_;
    r.prepare.inputs = analysis.prepared->inputFiles;
    r.batch = analysis.settings.batch;
    r.seed = 1234;
    return r;
}

QString StudioSession::tuneUnavailable() const
{
    if (!prepared_)
        return tr("Tune needs a model: open an .onnx file first.");
    const QFileInfo worker(tuneWorkerProgram());
    if (!worker.isFile() || !worker.isExecutable())
        return tr("Tune times each configuration in its own process with the ramiel command-line program, which "
                  "should be next to Ramiel Studio: %1 is missing. Build the 'ramiel' target or install both.")
            .arg(worker.filePath());
    return {};
}

QFuture<TuneOutcome> StudioSession::tuneAsync(double budgetSeconds, std::shared_ptr<std::atomic<bool>> cancelled,
                                              pipeline::TuneProgress progress) const
{
    pipeline::TuneOptions o;
    o.cores = settings_.cores();
    o.batch = settings_.batch;
    o.budgetSeconds = budgetSeconds;
    // The passes chosen here first, then none (as 'ramiel tune' does with the default ones).
    const std::string chosen = passes_ == defaultModelPasses() ? pipeline::kDefaultPasses : passList(passes_);
    o.passes = {chosen};
    if (!passes_.empty())
        o.passes.push_back("none");
    o.shapes = inputShapes_;
    o.inputs = inputFiles_;
    o.machineFile = machineFile_.toStdString();
    o.workerCommand = timingWorkerCommand();
    const std::string model = prepared_ ? prepared_->path : std::string();
    return QtConcurrent::run([=]() {
        TuneOutcome out;
        try {
            out.result = std::make_shared<const pipeline::TuneResult>(pipeline::tune(model, o, progress, cancelled.get()));
        } catch (const pipeline::TuneCancelled&) {
            out.cancelled = true;
        } catch (const std::exception& e) {
            out.error = QString::fromStdString(e.what());
        }
        return out;
    });
}

void StudioSession::setInputs(const std::vector<std::string>& inputShapes, const std::vector<std::string>& inputFiles)
{
    config_.reset();
    if (prepared_)
        prepareAsync(QString::fromStdString(prepared_->path), nullptr, inputShapes, inputFiles);
}

void StudioSession::setPasses(const std::vector<std::string>& names)
{
    const std::vector<std::string> effective = passes::parsePassList(passList(names));
    if (effective == passes_)
        return;
    passes_ = effective;
    config_.reset();
    Q_EMIT settingsChanged();
    if (prepared_)
        prepareAsync(QString::fromStdString(prepared_->path), prepared_->source, inputShapes_, inputFiles_);
}

// Reads the file (when `source` is null), runs the passes, lays out and
// schedules, reporting each stage in the status bar.
void StudioSession::prepareAsync(const QString& path, std::shared_ptr<const Model> source,
                                 const std::vector<std::string>& inputShapes, const std::vector<std::string>& inputFiles)
{
    const int generation = ++openGeneration_;
    ++analysisGeneration_;
    ++layoutGeneration_;
    const QString name = QFileInfo(path).fileName();
    setBusy(true, source ? tr("%1: running the graph passes").arg(name)
                         : tr("Opening %1: reading and checking the model").arg(name));
    const QString machineFile = machineFile_;
    const PlanSettings settings = settings_;
    const bool leftToRight = leftToRight_, showNames = showNames_;
    const std::vector<std::string> passNames = passes_;
    const std::vector<std::string> collapsed = collapsed_;
    const std::optional<pipeline::RunConfig> config = config_;
    auto stage = [this, generation](const QString& text) {
        QMetaObject::invokeMethod(
            this, [this, generation, text] {
                if (generation == openGeneration_)
                    setBusy(true, text);
            },
            Qt::QueuedConnection);
    };
    QFuture<Opened> future = QtConcurrent::run([=]() {
        Opened o;
        try {
            QElapsedTimer read;
            read.start();
            o.inputShapes = inputShapes;
            o.inputFiles = inputFiles;
            std::shared_ptr<const Model> model =
                source ? source
                       : pipeline::readModel(path.toStdString(), inputShapes, pipeline::SymbolicBatch::OneSample, inputFiles);
            const double readSeconds = source ? 0 : double(read.nsecsElapsed()) * 1e-9;
            if (!passNames.empty())
                stage(tr("%1: running the graph passes").arg(name));
            pipeline::PrepareOptions options = prepareOptions(passNames, machineFile);
            options.inputs = inputFiles;
            o.prepared = pipeline::prepare(model, options, readSeconds);
            stage(tr("%1: laying out %2 nodes").arg(name).arg(o.prepared->model.graph.nodeCount()));
            o.layout = layoutModel(*o.prepared, leftToRight, showNames, collapsed);
            stage(tr("%1: scheduling").arg(name));
            o.analysis = planWith(o.prepared, settings, {}, config);
        } catch (const std::exception& e) {
            o.error = messageOf(e);
        }
        return o;
    });
    watch(this, future, [this, generation, path](const Opened& o) {
        if (generation != openGeneration_)
            return;
        setBusy(false);
        if (!o.error.isEmpty()) {
            config_.reset();  // it was for this model or these passes
            Q_EMIT failed(path, o.error);
            return;
        }
        prepared_ = o.prepared;
        inputShapes_ = o.inputShapes;
        inputFiles_ = o.inputFiles;
        layout_ = o.layout;
        analysis_ = o.analysis;
        measured_.clear();  // node ids changed: a profile is of the previous graph
        if (settings_.costs == "measured") {
            settings_.costs = "static";
            Q_EMIT settingsChanged();
        }
        Q_EMIT modelChanged();
        Q_EMIT analysisChanged();
        if (analysis_->settings != settings_)  // the settings changed while this was being prepared
            runAnalysis();
    });
}

void StudioSession::cancel()
{
    ++openGeneration_;
    ++analysisGeneration_;
    ++layoutGeneration_;
    setBusy(false);
}

void StudioSession::setSettings(const PlanSettings& settings)
{
    if (settings == settings_)
        return;
    settings_ = settings;
    config_.reset();
    Q_EMIT settingsChanged();
    runAnalysis();
}

void StudioSession::setMeasuredSeconds(std::vector<double> seconds)
{
    measured_ = std::move(seconds);
    if (settings_.costs == "measured")
        runAnalysis();
}

void StudioSession::runAnalysis()
{
    if (!prepared_)
        return;
    const int generation = ++analysisGeneration_;
    auto prepared = prepared_;
    const PlanSettings settings = settings_;
    const std::vector<double> measured = measured_;
    const std::optional<pipeline::RunConfig> config = config_;
    QFuture<std::pair<std::shared_ptr<const PlannedModel>, QString>> future = QtConcurrent::run([=]() {
        try {
            return std::make_pair(planWith(prepared, settings, measured, config), QString());
        } catch (const std::exception& e) {
            return std::make_pair(std::shared_ptr<const PlannedModel>(), messageOf(e));
        }
    });
    watch(this, future, [this, generation](const std::pair<std::shared_ptr<const PlannedModel>, QString>& r) {
        if (generation != analysisGeneration_ || (r.first && r.first->prepared != prepared_))
            return;
        if (!r.first) {
            config_.reset();
            Q_EMIT failed(prepared_ ? QString::fromStdString(prepared_->path) : QString(), r.second);
            return;
        }
        analysis_ = r.first;
        Q_EMIT analysisChanged();
    });
}

QFuture<std::shared_ptr<const PlannedModel>> StudioSession::planAsync(const PlanSettings& settings) const
{
    auto prepared = prepared_;
    const std::vector<double> measured = measured_;
    return QtConcurrent::run([=]() -> std::shared_ptr<const PlannedModel> {
        if (!prepared)
            return {};
        try {
            return planWith(prepared, settings, measured);
        } catch (const std::exception&) {
            return {};
        }
    });
}

QFuture<std::shared_ptr<const TeachingSteps>> StudioSession::teachingStepsAsync() const
{
    auto planned = analysis_;
    return QtConcurrent::run([=]() -> std::shared_ptr<const TeachingSteps> {
        if (!planned)
            return {};
        return std::make_shared<const TeachingSteps>(pipeline::teachingSteps(*planned));
    });
}

void StudioSession::setLayoutOptions(bool leftToRight, bool showNames)
{
    if (leftToRight == leftToRight_ && showNames == showNames_)
        return;
    leftToRight_ = leftToRight;
    showNames_ = showNames;
    relayout();
}

void StudioSession::setCollapsedModules(std::vector<std::string> modules)
{
    std::sort(modules.begin(), modules.end());
    modules.erase(std::unique(modules.begin(), modules.end()), modules.end());
    if (modules == collapsed_)
        return;
    collapsed_ = std::move(modules);
    relayout();
}

void StudioSession::relayout()
{
    if (!prepared_)
        return;
    const int generation = ++layoutGeneration_;
    auto prepared = prepared_;
    const bool leftToRight = leftToRight_, showNames = showNames_;
    const std::vector<std::string> collapsed = collapsed_;
    setBusy(true, tr("Laying out the graph"));
    QFuture<std::pair<std::shared_ptr<const GraphLayout>, QString>> future = QtConcurrent::run([=]() {
        try {
            return std::make_pair(layoutModel(*prepared, leftToRight, showNames, collapsed), QString());
        } catch (const std::exception& e) {
            return std::make_pair(std::shared_ptr<const GraphLayout>(), messageOf(e));
        }
    });
    watch(this, future, [this, generation](const std::pair<std::shared_ptr<const GraphLayout>, QString>& r) {
        if (generation != layoutGeneration_)
            return;
        setBusy(false);
        if (!r.first) {
            Q_EMIT failed(prepared_ ? QString::fromStdString(prepared_->path) : QString(), r.second);
            return;
        }
        layout_ = r.first;
        Q_EMIT layoutChanged();
    });
}

}  // namespace ramiel::studio
