#include "main_window.h"

#include "views/code_export_dialog.h"
#include "views/compare_view.h"
#include "views/find_bar.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/graph_export.h"
#include "views/input_sizes_panel.h"
#include "views/palette.h"
#include "views/metrics_panel.h"
#include "views/properties_panel.h"
#include "views/run_panel.h"
#include "views/schedule_charts.h"
#include "views/settings_store.h"
#include "views/studio_session.h"
#include "views/teaching_panel.h"
#include "views/tune_panel.h"
#include "views/tuning_panel.h"

#include "core/analysis/grouping.h"
#include "core/layout/dot_layout.h"
#include "core/onnx/onnx_import.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "core/util/text.h"
#include "core/util/version.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QComboBox>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace ramiel::studio {
namespace {
constexpr int kMaxRecent = 8;
}

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), session_(new StudioSession(this)), scene_(new GraphScene(this)),
      view_(new GraphView(scene_, this)), findBar_(new FindBar(this)), tabs_(new QTabWidget(this)),
      tuning_(new TuningPanel(session_, this)), metrics_(new MetricsPanel(this)),
      properties_(new PropertiesPanel(this)), loads_(new LoadsChart(this)), gantt_(new GanttChart(this)),
      run_(new RunPanel(session_, this)), tune_(new TunePanel(session_, this)), compare_(new CompareView(session_, this)),
      teaching_(new TeachingPanel(session_, scene_, this)), inputSizes_(new InputSizesPanel(session_, this)),
      bodyBar_(new QWidget(this)), bodyPath_(new QLabel(bodyBar_)), modelLabel_(new QLabel(this)),
      zoomLabel_(new QLabel(this)), progress_(new QProgressBar(this)), cancel_(new QPushButton(tr("Cancel"), this))
{
    setWindowTitle(tr("Ramiel Studio"));
    setAcceptDrops(true);
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);

    auto* graphPage = new QWidget(this);
    auto* graphLayout = new QVBoxLayout(graphPage);
    graphLayout->setContentsMargins(0, 0, 0, 0);
    graphLayout->setSpacing(0);
    graphLayout->addWidget(findBar_);
    graphLayout->addWidget(bodyBar_);
    graphLayout->addWidget(view_, 1);
    findBar_->hide();
    {
        // Where a body opened from the graph is, and the way back.
        bodyBar_->setObjectName(QStringLiteral("bodyBar"));
        auto* bar = new QHBoxLayout(bodyBar_);
        bar->setContentsMargins(6, 3, 6, 3);
        auto* back = new QPushButton(tr("< Back"), bodyBar_);
        back->setObjectName(QStringLiteral("bodyBack"));
        back->setToolTip(tr("Back to the graph this body was opened from (Alt+Left)"));
        back->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Left));
        connect(back, &QPushButton::clicked, this, &MainWindow::closeBody);
        bodyPath_->setTextFormat(Qt::PlainText);
        bar->addWidget(back);
        bar->addWidget(bodyPath_, 1);
        bodyBar_->hide();
    }
    tabs_->addTab(graphPage, tr("Graph"));
    tabs_->addTab(compare_, tr("Compare"));
    tabs_->setDocumentMode(true);
    setCentralWidget(tabs_);

    createDocks();
    createActions();

    progress_->setRange(0, 0);
    progress_->setMaximumWidth(160);
    progress_->hide();
    cancel_->hide();
    statusBar()->addWidget(modelLabel_, 1);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    statusBar()->addPermanentWidget(zoomLabel_);
    zoomLabel_->setText(QStringLiteral("100%"));
    modelLabel_->setText(tr("No model. Open one with File > Open (Ctrl+O) or drop an .onnx file here."));

    connect(cancel_, &QPushButton::clicked, session_, &StudioSession::cancel);
    connect(session_, &StudioSession::busyChanged, this, &MainWindow::onBusy);
    connect(session_, &StudioSession::modelChanged, this, &MainWindow::onModelChanged);
    connect(session_, &StudioSession::layoutChanged, this, [this] {
        bodies_.clear();
        bodyBar_->hide();
        scene_->setNote({});
        scene_->setGraph(session_->prepared(), session_->layout());
        scene_->setAnalysis(session_->analysis());
        view_->showReadable();
    });
    connect(session_, &StudioSession::analysisChanged, this, &MainWindow::onAnalysisChanged);
    connect(session_, &StudioSession::failed, this, &MainWindow::showError);
    // Properties describe the model's nodes; inside a body, the tooltips do.
    connect(scene_, &GraphScene::nodeSelected, this, [this](NodeId n) { properties_->showNode(bodies_.empty() ? n : kNone); });
    connect(scene_, &GraphScene::valueSelected, this, [this](ValueId v) {
        if (bodies_.empty())
            properties_->showValue(v);
    });
    connect(view_, &GraphView::bodyRequested, this, &MainWindow::openBody);
    // Teaching: the view goes to the step's nodes, the charts show its clustering.
    connect(teaching_, &TeachingPanel::stepShown, this, [this] {
        if (const auto plan = teaching_->stepPlan()) {
            if (!bodies_.empty()) {
                closeAllBodies();  // the overlay is on the model's graph
                teaching_->showStep(teaching_->step());
                return;
            }
            gantt_->setAnalysis(plan, teaching_->stepColors(), teaching_->stepTitle());
            loads_->setAnalysis(plan, teaching_->stepColors());
            view_->showNodes(teaching_->stepNodes());
        } else {
            gantt_->setAnalysis(session_->analysis());
            loads_->setAnalysis(session_->analysis());
        }
    });
    connect(findBar_, &FindBar::nodeFound, this, [this](NodeId n) {
        scene_->selectNode(n);
        view_->centerOnNode(n);
    });
    connect(gantt_, &GanttChart::nodeClicked, this, [this](int n) {
        tabs_->setCurrentIndex(0);
        closeAllBodies();  // the chart's nodes are the model's
        scene_->selectNode(n);
        view_->centerOnNode(n);
    });
    connect(view_, &GraphView::zoomChanged, this,
            [this](double z) { zoomLabel_->setText(QStringLiteral("%1%").arg(qRound(z * 100))); });
    connect(run_, &RunPanel::runFigures, metrics_, &MetricsPanel::setRunFigures);
    connect(tuning_, &TuningPanel::shownCopyChanged, scene_, &GraphScene::setCopy);
    connect(view_, &GraphView::fileDropped, this, &MainWindow::openFile);
    connect(view_, &GraphView::collapseRequested, this, [this](const QString& module) {
        std::vector<std::string> modules = session_->collapsedModules();
        modules.push_back(module.toStdString());
        session_->setCollapsedModules(modules);
    });
    connect(view_, &GraphView::expandRequested, this, [this](const QString& module) {
        std::vector<std::string> modules = session_->collapsedModules();
        modules.erase(std::remove(modules.begin(), modules.end(), module.toStdString()), modules.end());
        session_->setCollapsedModules(modules);
    });

    QSettings settings;
    // The plan settings as the last session left them; every change is kept.
    session_->setSettings(loadPlanSettings(settings, session_->settings()));
    connect(session_, &StudioSession::settingsChanged, this, [this] {
        QSettings s;
        savePlanSettings(s, session_->settings());
    });
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    applyTheme(settings.value(QStringLiteral("view/dark"), false).toBool());
    if (!settings.contains(QStringLiteral("window/geometry")))
        resize(1440, 900);
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks()
{
    auto dock = [this](QWidget* w, const QString& title, const QString& name, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    auto* tuningScroll = new QScrollArea(this);
    tuningScroll->setWidget(tuning_);
    tuningScroll->setWidgetResizable(true);
    tuningScroll->setFrameShape(QFrame::NoFrame);
    QDockWidget* tuning = dock(tuningScroll, tr("Tuning"), QStringLiteral("tuning"), Qt::LeftDockWidgetArea);
    QDockWidget* teaching = dock(teaching_, tr("Teaching"), QStringLiteral("teaching"), Qt::LeftDockWidgetArea);
    QDockWidget* sizes = dock(inputSizes_, tr("Input Sizes"), QStringLiteral("inputSizes"), Qt::LeftDockWidgetArea);
    QDockWidget* metrics = dock(metrics_, tr("Metrics"), QStringLiteral("metrics"), Qt::RightDockWidgetArea);
    QDockWidget* props = dock(properties_, tr("Properties"), QStringLiteral("properties"), Qt::RightDockWidgetArea);
    QDockWidget* gantt = dock(gantt_, tr("Gantt (simulated)"), QStringLiteral("gantt"), Qt::BottomDockWidgetArea);
    QDockWidget* loads = dock(loads_, tr("Cluster loads"), QStringLiteral("loads"), Qt::BottomDockWidgetArea);
    QDockWidget* run = dock(run_, tr("Run"), QStringLiteral("run"), Qt::BottomDockWidgetArea);
    QDockWidget* tune = dock(tune_, tr("Tune"), QStringLiteral("tune"), Qt::BottomDockWidgetArea);
    tabifyDockWidget(tuning, teaching);
    tabifyDockWidget(teaching, sizes);
    tuning->raise();
    splitDockWidget(metrics, props, Qt::Vertical);
    splitDockWidget(gantt, loads, Qt::Horizontal);
    tabifyDockWidget(loads, run);
    tabifyDockWidget(run, tune);
    loads->raise();
    // Default proportions, applied once the window has its size (a saved layout wins).
    QTimer::singleShot(0, this, [this, tuning, metrics, gantt, loads] {
        if (QSettings().contains(QStringLiteral("window/state")))
            return;
        resizeDocks({tuning, metrics}, {270, 360}, Qt::Horizontal);
        resizeDocks({gantt, loads}, {width() * 3 / 5, width() * 2 / 5}, Qt::Horizontal);
        resizeDocks({gantt}, {240}, Qt::Vertical);
    });
}

void MainWindow::createActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::showOpenDialog);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    QAction* exportCode = exportMenu->addAction(tr("&Code (Python or C++)..."), this, &MainWindow::exportCodeDialog);
    exportCode->setIconText(tr("Export Code"));
    exportCode->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportMenu->addAction(tr("Graph as &SVG..."), this, [this] { exportImageDialog("svg"); });
    exportMenu->addAction(tr("Graph as &PNG..."), this, [this] { exportImageDialog("png"); });
    exportMenu->addAction(tr("Metrics and schedule as &JSON..."), this, &MainWindow::exportJsonDialog);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* find = edit->addAction(tr("&Find..."), findBar_, &FindBar::activate);
    find->setShortcut(QKeySequence::Find);
    QAction* next = edit->addAction(tr("Find &Next"), findBar_, &FindBar::next);
    next->setShortcut(QKeySequence::FindNext);
    QAction* prev = edit->addAction(tr("Find &Previous"), findBar_, &FindBar::previous);
    prev->setShortcut(QKeySequence::FindPrevious);

    viewMenu_ = menuBar()->addMenu(tr("&View"));
    QAction* zoomIn = viewMenu_->addAction(tr("Zoom &In"), view_, &GraphView::zoomIn);
    zoomIn->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence::ZoomIn});
    QAction* zoomOut = viewMenu_->addAction(tr("Zoom &Out"), view_, &GraphView::zoomOut);
    zoomOut->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence::ZoomOut});
    QAction* fit = viewMenu_->addAction(tr("&Fit to Window"), view_, &GraphView::fitToWindow);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction* actual = viewMenu_->addAction(tr("&Actual Size (100%)"), view_, &GraphView::actualSize);
    actual->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    viewMenu_->addSeparator();

    QMenu* colors = viewMenu_->addMenu(tr("&Color By"));
    auto* group = new QActionGroup(this);
    const int savedMode = QSettings().value(QStringLiteral("view/colorMode"), int(ColorMode::Cluster)).toInt();
    auto colorAction = [&](const QString& text, ColorMode mode, const QKeySequence& key) {
        QAction* a = colors->addAction(text, this, [this, mode] {
            scene_->setColorMode(mode);
            QSettings().setValue(QStringLiteral("view/colorMode"), int(mode));
        });
        a->setCheckable(true);
        a->setShortcut(key);
        group->addAction(a);
        if (int(mode) == savedMode) {
            a->setChecked(true);
            scene_->setColorMode(mode);
        }
        return a;
    };
    colorAction(tr("&Cluster"), ColorMode::Cluster, QKeySequence(Qt::ALT | Qt::Key_1));
    colorAction(tr("&Operator Type"), ColorMode::OpType, QKeySequence(Qt::ALT | Qt::Key_2));
    colorAction(tr("&Time (heat map)"), ColorMode::Time, QKeySequence(Qt::ALT | Qt::Key_3));
    if (!group->checkedAction())
        group->actions().front()->setChecked(true);

    auto toggle = [&](const QString& text, bool on, auto slot) {
        QAction* a = viewMenu_->addAction(text);
        a->setCheckable(true);
        a->setChecked(on);
        connect(a, &QAction::toggled, this, slot);
        return a;
    };
    QAction* critical = toggle(tr("&Critical Path"), true, [this](bool on) { scene_->setShowCriticalPath(on); });
    critical->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    // The layout's direction and node names as the last session left them.
    const bool names = QSettings().value(QStringLiteral("view/nodeNames"), false).toBool();
    const bool leftToRight = QSettings().value(QStringLiteral("view/leftToRight"), false).toBool();
    session_->setLayoutOptions(leftToRight, names);
    toggle(tr("Node &Names"), names, [this](bool on) {
        session_->setLayoutOptions(session_->leftToRight(), on);
        QSettings().setValue(QStringLiteral("view/nodeNames"), on);
    });
    toggle(tr("Edge &Shapes"), false, [this](bool on) { scene_->setShowShapes(on); });
    toggle(tr("&Left to Right"), leftToRight, [this](bool on) {
        session_->setLayoutOptions(on, session_->showNames());
        QSettings().setValue(QStringLiteral("view/leftToRight"), on);
    });
    // Modules by depth of their name prefix: densenet121 at depth 2 reads as its dense blocks.
    QMenu* modules = viewMenu_->addMenu(tr("Collapse &Modules"));
    for (int depth = 1; depth <= 3; ++depth)
        modules->addAction(tr("At Depth %1").arg(depth), this, [this, depth] {
            if (!requireModel(tr("Collapse Modules")))
                return;
            std::vector<std::string> all;
            for (const std::string& m : modulesAtDepth(session_->prepared()->model.graph, depth))
                all.push_back(m);
            if (all.empty())
                statusBar()->showMessage(tr("No modules %1 levels deep in the node names").arg(depth), 5000);
            session_->setCollapsedModules(all);
        });
    modules->addSeparator();
    modules->addAction(tr("&Expand All"), this, [this] { session_->setCollapsedModules({}); });
    toggle(tr("&Minimap"), true, [this](bool on) { view_->setMinimapVisible(on); });
    toggle(tr("L&egend"), true, [this](bool on) { view_->setLegendVisible(on); });
    viewMenu_->addSeparator();
    darkAction_ = toggle(tr("&Dark Theme"), QSettings().value(QStringLiteral("view/dark"), false).toBool(),
                         [this](bool on) {
                             applyTheme(on);
                             QSettings().setValue(QStringLiteral("view/dark"), on);
                         });
    viewMenu_->addSeparator();
    QMenu* panels = viewMenu_->addMenu(tr("&Panels"));
    for (QDockWidget* d : findChildren<QDockWidget*>())
        panels->addAction(d->toggleViewAction());

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    QAction* runAction = runMenu->addAction(tr("&Run Serial and Parallel"), this, [this] {
        if (!requireModel(tr("Run")))
            return;
        if (auto* dock = findChild<QDockWidget*>(QStringLiteral("run"))) {
            dock->show();
            dock->raise();
        }
        run_->start();
    });
    runAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QAction* tuneAction = runMenu->addAction(tr("&Tune..."), this, &MainWindow::startTune);
    tuneAction->setIconText(tr("Tune"));
    tuneAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    tuneAction->setToolTip(tr("Measure the ways to run the model on P cores and pick the fastest"));
    runMenu->addAction(tr("&Stop"), run_, &RunPanel::stop);
    runMenu->addAction(tr("&Cancel Tune"), tune_, &TunePanel::cancel);
    runMenu->addAction(tr("Use Profile as &Measured Costs"), run_, &RunPanel::useProfile);

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    bar->addAction(open);
    bar->addSeparator();
    bar->addAction(zoomOut);
    bar->addAction(zoomIn);
    bar->addAction(fit);
    bar->addAction(actual);
    bar->addSeparator();
    auto* colorBox = new QComboBox(bar);
    colorBox->addItems({tr("Color: cluster"), tr("Color: operator"), tr("Color: time")});
    colorBox->setToolTip(tr("Color nodes by cluster, operator type or (measured) time"));
    connect(colorBox, &QComboBox::currentIndexChanged, this, [group](int i) { group->actions().at(i)->trigger(); });
    connect(group, &QActionGroup::triggered, colorBox,
            [group, colorBox](QAction* a) { colorBox->setCurrentIndex(int(group->actions().indexOf(a))); });
    bar->addWidget(colorBox);
    bar->addAction(critical);
    bar->addSeparator();
    bar->addAction(runAction);
    bar->addAction(tuneAction);
    bar->addAction(exportCode);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Ramiel Studio"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::applyTheme(bool dark)
{
    // Fusion everywhere (the same look on every desktop), with check boxes that show on a dark palette.
    if (qApp->property("ramielStyle").isNull()) {
        qApp->setStyle(createStudioStyle());
        qApp->setProperty("ramielStyle", true);
    }
    qApp->setPalette(dark ? darkPalette() : qApp->style()->standardPalette());
}

void MainWindow::setDarkTheme(bool dark)
{
    // For this run only (--theme): the View menu shows it, the stored choice stays.
    const QSignalBlocker block(darkAction_);
    darkAction_->setChecked(dark);
    applyTheme(dark);
}

void MainWindow::showOpenDialog()
{
    const QString dir = QSettings().value(QStringLiteral("file/lastDir")).toString();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open ONNX Model"), dir, tr("ONNX models (*.onnx);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::openFile(const QString& path)
{
    pendingPath_ = path;
    QSettings().setValue(QStringLiteral("file/lastDir"), QFileInfo(path).absolutePath());
    // The input sizes and data files set for this model last time; a file since gone is dropped.
    const QString key = QFileInfo(path).absoluteFilePath();
    std::vector<std::string> shapes, files;
    for (const QString& s : QSettings().value(QStringLiteral("model/inputSizes")).toMap().value(key).toStringList())
        shapes.push_back(s.toStdString());
    QStringList dropped;
    for (const QString& s : QSettings().value(QStringLiteral("model/inputFiles")).toMap().value(key).toStringList()) {
        try {
            readNpyHeader(s.section('=', 1).toStdString());
            files.push_back(s.toStdString());
        } catch (const Error& e) {
            dropped << QString::fromStdString(e.what());
        }
    }
    openNote_ = dropped.isEmpty() ? QString() : tr("Random data instead of %1").arg(dropped.join("; "));
    session_->open(path, shapes, files);
}

void MainWindow::openWithConfig(const QString& path, const pipeline::RunConfig& config)
{
    pendingPath_ = path;
    session_->openWithConfig(path, config);
}

void MainWindow::startTune()
{
    if (!requireModel(tr("Tune")))
        return;
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("tune"))) {
        dock->show();
        dock->raise();
    }
    if (run_->running()) {
        statusBar()->showMessage(tr("Tune: a run is going; stop it first (both would share the cores)."), 8000);
        return;
    }
    tune_->start();
}

void MainWindow::rememberInputs()
{
    const QString key = QFileInfo(currentPath_).absoluteFilePath();
    const auto remember = [&key](const QString& setting, const std::vector<std::string>& specs) {
        QSettings settings;
        QVariantMap byModel = settings.value(setting).toMap();
        QStringList list;
        for (const std::string& s : specs)
            list << QString::fromStdString(s);
        if (list.isEmpty())
            byModel.remove(key);
        else
            byModel.insert(key, list);
        settings.setValue(setting, byModel);
    };
    remember(QStringLiteral("model/inputSizes"), session_->inputShapes());
    remember(QStringLiteral("model/inputFiles"), session_->inputFiles());
}

void MainWindow::onBusy(bool busy, const QString& stage)
{
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    if (busy)
        statusBar()->showMessage(stage);
    else
        statusBar()->clearMessage();
}

void MainWindow::onModelChanged()
{
    auto prepared = session_->prepared();
    currentPath_ = QString::fromStdString(prepared->path);
    addRecent(currentPath_);
    rememberInputs();
    if (!openNote_.isEmpty())
        statusBar()->showMessage(std::exchange(openNote_, QString()), 15000);
    bodies_.clear();
    bodyBar_->hide();
    scene_->setNote({});
    scene_->setGraph(prepared, session_->layout());
    findBar_->setGraph(&prepared->model.graph);
    properties_->showNode(kNone);
    view_->showReadable();
    const QFileInfo info(currentPath_);
    setWindowTitle(tr("%1 - Ramiel Studio").arg(info.fileName()));
    modelLabel_->setText(tr("%1  |  %2 nodes, %3 edges  |  opset %4  |  read in %5 s, passes and costs %6 s, "
                            "laid out in %7 s")
                             .arg(info.fileName())
                             .arg(prepared->model.graph.nodeCount())
                             .arg(prepared->topo.edgeCount)
                             .arg(prepared->model.opsetVersion())
                             .arg(prepared->readSeconds, 0, 'f', 2)
                             .arg(prepared->prepareSeconds, 0, 'f', 2)
                             .arg(session_->layout()->seconds, 0, 'f', 2));
    Q_EMIT modelReady(true);
}

void MainWindow::onAnalysisChanged()
{
    auto a = session_->analysis();
    if (bodies_.empty())
        scene_->setAnalysis(a);  // a body has no schedule
    metrics_->setAnalysis(a);
    properties_->setAnalysis(a);
    loads_->setAnalysis(a);
    gantt_->setAnalysis(a);
}

void MainWindow::openBody(int node, const QString& attribute, int index)
{
    const auto parent = bodies_.empty() ? session_->prepared() : bodies_.back().prepared;
    if (!parent || node < 0 || size_t(node) >= parent->model.graph.nodeCount())
        return;
    const Node& n = parent->model.graph.node(node);
    const Graph* body = subgraphOf(n, attribute.toStdString(), index);
    if (!body)
        return;
    teaching_->exit();  // its overlay is of the model's graph
    const QString name = QString::fromStdString(printable(n.name));
    QString which = attribute;
    for (const SubgraphRef& r : subgraphsOf(n))
        if (r.graph == body && r.count > 1)
            which += QStringLiteral("[%1]").arg(index);
    Body b;
    b.crumb = QStringLiteral("%1 '%2' \u203a %3").arg(QString::fromStdString(n.opType), name, which);
    b.note = tr("body '%1' of %2 '%3'").arg(which, QString::fromStdString(n.opType), name) + QLatin1Char('\n') +
             tr("not scheduled: the %1 node runs as one task").arg(QString::fromStdString(n.opType));
    try {
        b.prepared = pipeline::prepareSubgraph(*parent, *body, attribute.toStdString());
        b.layout = layoutModel(*b.prepared, session_->leftToRight(), session_->showNames());
    } catch (const Error& e) {
        showError(QString::fromStdString(parent->path), QString::fromStdString(e.message()));
        return;
    }
    bodies_.push_back(std::move(b));
    showGraphLevel();
}

void MainWindow::closeBody()
{
    if (bodies_.empty())
        return;
    bodies_.pop_back();
    showGraphLevel();
}

void MainWindow::closeAllBodies()
{
    if (bodies_.empty())
        return;
    bodies_.clear();
    showGraphLevel();
}

void MainWindow::showGraphLevel()
{
    properties_->showNode(kNone);
    if (bodies_.empty()) {
        scene_->setNote({});
        scene_->setGraph(session_->prepared(), session_->layout());
        scene_->setAnalysis(session_->analysis());
        if (session_->prepared())
            findBar_->setGraph(&session_->prepared()->model.graph);
        bodyBar_->hide();
        view_->setModulesEnabled(true);
    } else {
        const Body& b = bodies_.back();
        view_->setModulesEnabled(false);
        scene_->setGraph(b.prepared, b.layout);
        scene_->setNote(b.note);
        findBar_->setGraph(&b.prepared->model.graph);
        QStringList path{QFileInfo(currentPath_).fileName()};
        for (const Body& level : bodies_)
            path << level.crumb;
        bodyPath_->setText(path.join(QStringLiteral("  \u203a  ")));
        bodyBar_->show();
    }
    view_->showReadable();
}

void MainWindow::showError(const QString& path, const QString& message)
{
    const bool loading = !pendingPath_.isEmpty() && path == pendingPath_ && currentPath_ != pendingPath_;
    QMessageBox box(QMessageBox::Warning, loading ? tr("Cannot open model") : tr("Ramiel Studio"),
                    loading ? tr("Ramiel could not open %1.").arg(QFileInfo(path).fileName())
                            : tr("The operation failed."),
                    QMessageBox::Ok, this);
    box.setInformativeText(message);
    box.setDetailedText(tr("File: %1\n\n%2").arg(path, message));
    if (loading)
        Q_EMIT modelReady(false);
    if (qEnvironmentVariableIsSet("RAMIEL_STUDIO_NO_DIALOGS")) {
        statusBar()->showMessage(message);
        return;
    }
    box.exec();
}

void MainWindow::addRecent(const QString& path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("file/recent")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QStringLiteral("file/recent"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    recentMenu_->clear();
    const QStringList recent = QSettings().value(QStringLiteral("file/recent")).toStringList();
    for (const QString& path : recent)
        recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })
            ->setToolTip(path);
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        openFile(urls.first().toLocalFile());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    run_->stop();
    tune_->cancel();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

bool MainWindow::requireModel(const QString& what)
{
    if (session_->analysis())
        return true;
    const QString text = session_->busy()
                             ? tr("%1: the model is still loading; try again when the status bar says it is ready.")
                                   .arg(what)
                             : tr("%1 needs a model: open an .onnx file first (File > Open, or drop one on the "
                                  "window).")
                                   .arg(what);
    statusBar()->showMessage(text, 8000);
    auto* box = new QMessageBox(QMessageBox::Information, tr("No model open"), text, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("noModelMessage"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return false;
}

void MainWindow::exportImageDialog(const QString& suffix)
{
    if (!requireModel(tr("Export")))
        return;
    const QString base = QFileInfo(currentPath_).completeBaseName();
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Graph"), base + "." + suffix,
        suffix == "svg" ? tr("SVG images (*.svg)") : tr("PNG images (*.png)"));
    if (!path.isEmpty())
        exportGraphImage(path);
}

void MainWindow::exportGraphImage(const QString& path)
{
    try {
        if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive))
            writeSceneSvg(*scene_, path, QFileInfo(currentPath_).fileName(), view_->legendVisible());
        else
            writeScenePng(*scene_, path, view_->legendVisible());
        statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    } catch (const std::exception& e) {
        showError(path, QString::fromStdString(e.what()));
    }
}

void MainWindow::exportJsonDialog()
{
    if (!requireModel(tr("Export")))
        return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Metrics and Schedule"),
                                                      QFileInfo(currentPath_).completeBaseName() + ".json",
                                                      tr("JSON (*.json)"));
    if (!path.isEmpty())
        exportJson(path);
}

void MainWindow::exportJson(const QString& path)
{
    try {
        writeAnalysisJson(*session_->analysis(), path);
        statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
    } catch (const std::exception& e) {
        showError(path, QString::fromStdString(e.what()));
    }
}

void MainWindow::exportCodeDialog()
{
    if (!requireModel(tr("Export")))
        return;
    auto* dialog = new CodeExportDialog(session_->analysis(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Ramiel Studio"),
                       tr("<h3>Ramiel Studio %1</h3>"
                          "<p>Find and exploit the task parallelism in ONNX dataflow graphs on CPU multicores: "
                          "critical-path linear clustering, merging, cloning and hyperclustering, simulated and run "
                          "on libtorch.</p>"
                          "<p>Qt %2 (run time %3), Graphviz %4; ONNX import with ONNX %5's own checker and "
                          "shape inference; runs on libtorch (loaded on the first run).</p>"
                          "<p>Shortcuts: Open Ctrl+O, Find Ctrl+F, Zoom Ctrl+= / Ctrl+-, Fit Ctrl+0, "
                          "Run Ctrl+R, Tune Ctrl+T, Export Ctrl+E.</p>")
                           .arg(QString::fromLatin1(ramiel::kVersion), QStringLiteral(QT_VERSION_STR),
                                QString::fromLatin1(qVersion()), QString::fromStdString(graphvizVersion()),
                                QString::fromStdString(onnxVersion())));
}

}  // namespace ramiel::studio
