#include "studio_session.h"

#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace ramiel::studio {

std::vector<std::string> defaultModelPasses()
{
    std::vector<std::string> names;
    for (const passes::PassInfo& info : passes::registeredPasses())
        if (info.onByDefault && !info.scheduling)
            names.push_back(info.name);
    return names;
}

std::shared_ptr<const Model> readModel(const QString& path)
{
    return std::make_shared<const Model>(loadOnnx(path.toStdString()));
}

std::shared_ptr<const PreparedModel> prepareModel(const QString& path, std::shared_ptr<const Model> source,
                                                  const std::vector<std::string>& passNames,
                                                  const QString& machineFile, double readSeconds)
{
    QElapsedTimer timer;
    timer.start();
    auto p = std::make_shared<PreparedModel>();
    p->path = path;
    p->readSeconds = readSeconds;
    p->source = source;
    p->model = *source;
    std::vector<std::string> modelPasses;
    for (const std::string& name : passNames)
        if (!passes::findPass(name).scheduling)
            modelPasses.push_back(name);
    p->passes = modelPasses;
    if (!modelPasses.empty())
        p->passStats = passes::runPipeline(p->model, modelPasses, passes::PassContext{}).stats;
    p->topo = buildTopology(p->model.graph);
    p->machine = obtainMachineConstants(machineFile.toStdString());
    p->staticCosts = estimateCosts(p->model.graph);
    p->staticSeconds = costSeconds(p->staticCosts, p->machine);
    p->loadSeconds = double(timer.nsecsElapsed()) * 1e-9;
    return p;
}

std::shared_ptr<const GraphLayout> layoutModel(const PreparedModel& prepared, bool leftToRight, bool showNames)
{
    QElapsedTimer timer;
    timer.start();
    auto l = std::make_shared<GraphLayout>();
    l->display = displayGraphOf(prepared.model.graph, showNames);
    l->layout = layoutWithDot(layoutInputOf(l->display, leftToRight));
    l->leftToRight = leftToRight;
    l->seconds = double(timer.nsecsElapsed()) * 1e-9;
    return l;
}

std::shared_ptr<const Analysis> analyze(std::shared_ptr<const PreparedModel> prepared,
                                        const ScheduleSettings& settings,
                                        const std::vector<double>& measuredSeconds)
{
    QElapsedTimer timer;
    timer.start();
    auto a = std::make_shared<Analysis>();
    a->prepared = prepared;
    a->settings = settings;
    const Graph& graph = prepared->model.graph;
    const Topology& topo = prepared->topo;

    EdgeCostParameters edges;
    edges.latencySeconds = prepared->machine.handoffSeconds;
    edges.bytesPerSecond = prepared->machine.bytesPerSecond;
    CostTable table = CostTable::fromStatic(graph, topo, prepared->staticCosts, prepared->machine, edges);
    if (settings.measuredCosts && measuredSeconds.size() == graph.nodeCount()) {
        table = CostTable::fromMeasuredSeconds(measuredSeconds, 1, table, "the last run");
        a->measured = true;
    }
    a->costs = std::make_unique<CostTable>(std::move(table));
    a->nodeSeconds.resize(graph.nodeCount());
    for (size_t n = 0; n < graph.nodeCount(); ++n)
        a->nodeSeconds[n] = a->costs->node(NodeId(n), 1);
    a->metrics = computeMetrics(graph, topo, prepared->staticCosts, a->nodeSeconds);

    SchedulingProblem problem =
        SchedulingProblem::of(graph, topo, *a->costs, settings.workers, settings.batch, settings.degree);
    problem.clone = settings.clone;
    problem.check();
    a->plan = planSchedule(problem, settings.algorithm, true);
    const Schedule& s = a->plan.schedule;
    a->loads = clusterLoads(s, *a->costs);

    const size_t copies = size_t(std::max(1, s.degree));
    a->clusterOfNode.assign(copies, std::vector<int>(graph.nodeCount(), -1));
    a->cloneCount.assign(copies, std::vector<int>(graph.nodeCount(), 0));
    a->crossClusterEdges.resize(copies);
    for (size_t i = 0; i < s.instanceCount(); ++i)
        a->clusterOfNode[size_t(s.copy(InstanceId(i)))][size_t(s.node(InstanceId(i)))] = s.owner[i];
    for (size_t c = 0; c < s.clusters.size(); ++c)
        for (InstanceId i : s.clusters[c])
            if (s.isClone(c, i))
                ++a->cloneCount[size_t(s.copy(i))][size_t(s.node(i))];
    for (const CrossEdge& e : a->plan.crossEdges)
        if (s.copy(e.from) == s.copy(e.to))
            a->crossClusterEdges[size_t(s.copy(e.to))].insert({s.node(e.from), s.node(e.to)});

    a->onCriticalPath.assign(graph.nodeCount(), false);
    const std::vector<NodeId>& path = a->metrics.criticalPath;
    for (size_t k = 0; k < path.size(); ++k) {
        a->onCriticalPath[size_t(path[k])] = true;
        if (k + 1 < path.size())
            a->criticalEdges.insert({path[k], path[k + 1]});
    }
    a->seconds = double(timer.nsecsElapsed()) * 1e-9;
    return a;
}

// What an open request produces.
struct StudioSession::Opened {
    std::shared_ptr<const PreparedModel> prepared;
    std::shared_ptr<const GraphLayout> layout;
    std::shared_ptr<const Analysis> analysis;
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

StudioSession::StudioSession(QObject* parent) : QObject(parent) {}

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

void StudioSession::open(const QString& path) { prepareAsync(path, nullptr); }

void StudioSession::setPasses(const std::vector<std::string>& names)
{
    std::string list = "none";
    for (const std::string& n : names)
        list += "," + n;
    std::vector<std::string> effective;
    for (const std::string& name : passes::parsePassList(list))
        if (!passes::findPass(name).scheduling)
            effective.push_back(name);
    if (effective == passes_)
        return;
    passes_ = effective;
    Q_EMIT settingsChanged();
    if (prepared_)
        prepareAsync(prepared_->path, prepared_->source);
}

// Reads the file (when `source` is null), runs the passes, lays out and
// schedules, reporting each stage in the status bar.
void StudioSession::prepareAsync(const QString& path, std::shared_ptr<const Model> source)
{
    const int generation = ++openGeneration_;
    ++analysisGeneration_;
    ++layoutGeneration_;
    const QString name = QFileInfo(path).fileName();
    setBusy(true, source ? tr("%1: running the graph passes").arg(name)
                         : tr("Opening %1: reading and checking the model").arg(name));
    const QString machineFile = machineFile_;
    const ScheduleSettings settings = settings_;
    const bool leftToRight = leftToRight_, showNames = showNames_;
    const std::vector<std::string> passNames = passes_;
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
            std::shared_ptr<const Model> model = source ? source : readModel(path);
            const double readSeconds = source ? 0 : double(read.nsecsElapsed()) * 1e-9;
            if (!passNames.empty())
                stage(tr("%1: running the graph passes").arg(name));
            o.prepared = prepareModel(path, model, passNames, machineFile, readSeconds);
            stage(tr("%1: laying out %2 nodes").arg(name).arg(o.prepared->model.graph.nodeCount()));
            o.layout = layoutModel(*o.prepared, leftToRight, showNames);
            stage(tr("%1: scheduling").arg(name));
            o.analysis = analyze(o.prepared, settings);
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
            Q_EMIT failed(path, o.error);
            return;
        }
        prepared_ = o.prepared;
        layout_ = o.layout;
        analysis_ = o.analysis;
        measured_.clear();  // node ids changed
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

void StudioSession::setSettings(const ScheduleSettings& settings)
{
    if (settings == settings_)
        return;
    settings_ = settings;
    Q_EMIT settingsChanged();
    runAnalysis();
}

void StudioSession::setMeasuredSeconds(std::vector<double> seconds)
{
    measured_ = std::move(seconds);
    if (settings_.measuredCosts)
        runAnalysis();
}

void StudioSession::runAnalysis()
{
    if (!prepared_)
        return;
    const int generation = ++analysisGeneration_;
    auto prepared = prepared_;
    const ScheduleSettings settings = settings_;
    const std::vector<double> measured = measured_;
    QFuture<std::pair<std::shared_ptr<const Analysis>, QString>> future = QtConcurrent::run([=]() {
        try {
            return std::make_pair(analyze(prepared, settings, measured), QString());
        } catch (const std::exception& e) {
            return std::make_pair(std::shared_ptr<const Analysis>(), messageOf(e));
        }
    });
    watch(this, future, [this, generation](const std::pair<std::shared_ptr<const Analysis>, QString>& r) {
        if (generation != analysisGeneration_ || (r.first && r.first->prepared != prepared_))
            return;
        if (!r.first) {
            Q_EMIT failed(prepared_ ? prepared_->path : QString(), r.second);
            return;
        }
        analysis_ = r.first;
        Q_EMIT analysisChanged();
    });
}

QFuture<std::shared_ptr<const Analysis>> StudioSession::analyzeAsync(const ScheduleSettings& settings) const
{
    auto prepared = prepared_;
    const std::vector<double> measured = measured_;
    return QtConcurrent::run([=]() -> std::shared_ptr<const Analysis> {
        if (!prepared)
            return {};
        try {
            return analyze(prepared, settings, measured);
        } catch (const std::exception&) {
            return {};
        }
    });
}

void StudioSession::setLayoutOptions(bool leftToRight, bool showNames)
{
    if (leftToRight == leftToRight_ && showNames == showNames_)
        return;
    leftToRight_ = leftToRight;
    showNames_ = showNames;
    if (!prepared_)
        return;
    const int generation = ++layoutGeneration_;
    auto prepared = prepared_;
    setBusy(true, tr("Laying out the graph"));
    QFuture<std::pair<std::shared_ptr<const GraphLayout>, QString>> future = QtConcurrent::run([=]() {
        try {
            return std::make_pair(layoutModel(*prepared, leftToRight, showNames), QString());
        } catch (const std::exception& e) {
            return std::make_pair(std::shared_ptr<const GraphLayout>(), messageOf(e));
        }
    });
    watch(this, future, [this, generation](const std::pair<std::shared_ptr<const GraphLayout>, QString>& r) {
        if (generation != layoutGeneration_)
            return;
        setBusy(false);
        if (!r.first) {
            Q_EMIT failed(prepared_ ? prepared_->path : QString(), r.second);
            return;
        }
        layout_ = r.first;
        Q_EMIT layoutChanged();
    });
}

}  // namespace ramiel::studio
