// Ramiel Studio, driven through its widgets offscreen: opening, coloring by
// cluster, find, export, run, compare and teaching mode.
#include "app/studio/main_window.h"
#include "views/code_export_dialog.h"
#include "views/compare_view.h"
#include "views/display_graph.h"
#include "views/find_bar.h"
#include "views/graph_scene.h"
#include "views/graph_view.h"
#include "views/initializer_view.h"
#include "views/input_sizes_panel.h"
#include "views/metric_rows.h"
#include "views/metrics_panel.h"
#include "views/palette.h"
#include "views/properties_panel.h"
#include "views/run_panel.h"
#include "views/schedule_charts.h"
#include "views/studio_session.h"
#include "views/teaching_panel.h"
#include "views/tune_panel.h"
#include "views/tuning_panel.h"

#include "core/analysis/grouping.h"
#include "core/analysis/tensor_stats.h"
#include "core/ir/fused_ops.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/linear_clustering.h"
#include "core/schedule/scheduler.h"
#include "core/util/npy.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QClipboard>
#include <QMenu>
#include <QToolTip>
#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QRegularExpression>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QProcess>
#include <QLineEdit>
#include <QLineSeries>
#include <QValueAxis>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <algorithm>
#include <set>
#include <unistd.h>

using namespace ramiel;
using namespace ramiel::studio;

class TestStudio : public QObject {
    Q_OBJECT

private:
    // Opens a model and waits until it is drawn and scheduled.
    static bool open(MainWindow& w, const QString& path)
    {
        QSignalSpy ready(&w, &MainWindow::modelReady);
        w.openFile(path);
        if (!ready.wait(60000))
            return false;
        return ready.first().first().toBool() && w.session()->analysis() != nullptr;
    }
    static bool waitAnalysis(MainWindow& w)
    {
        QSignalSpy spy(w.session(), &StudioSession::analysisChanged);
        return spy.wait(30000);
    }
    // A window with the default settings (a test's settings do not reach the next test).
    static std::unique_ptr<MainWindow> window()
    {
        QSettings settings;
        settings.remove(QStringLiteral("plan"));
        settings.remove(QStringLiteral("view"));
        auto w = std::make_unique<MainWindow>();
        w->session()->setMachineFile(test::sourcePath("tests/data/machine.json"));
        w->resize(1400, 900);
        w->show();
        return w;
    }
    // Saves what a widget shows into the build tree (build/screenshots), to look at.
    static void keepScreenshot(QWidget* widget, const QString& name)
    {
        QDir().mkpath(RAMIEL_SCREENSHOT_DIR);
        QTest::qWait(300);  // deferred work: the minimap's render, the charts' layout
        QVERIFY(widget->grab().save(QDir(RAMIEL_SCREENSHOT_DIR).filePath(name)));
    }
    // The Input Sizes dock raised, saved as NAME.png in the light palette and NAME-dark.png in the dark.
    static void keepInputSizesScreenshots(MainWindow& w, const QString& name)
    {
        w.findChild<QDockWidget*>("inputSizes")->raise();
        keepScreenshot(&w, name + ".png");
        action(w, "Dark Theme")->setChecked(true);
        keepScreenshot(&w, name + "-dark.png");
        action(w, "Dark Theme")->setChecked(false);
    }
    // Run (serial and parallel, each in its own process) for two iterations succeeds.
    static void runsTwice(MainWindow& w)
    {
        QSignalSpy ran(w.runPanel(), &RunPanel::finished);
        w.runPanel()->iterationsBox()->setValue(2);
        w.runPanel()->start();
        QVERIFY(ran.wait(120000));
        QVERIFY2(ran.first().first().toBool(), qPrintable(ran.first().at(1).toString()));
    }
    // Every operator's box has the color of its cluster in the session's schedule.
    static void verifyClusterColors(MainWindow& w, int copy = 0)
    {
        auto a = w.session()->analysis();
        const Schedule& s = a->plan.schedule;
        for (const Node& n : a->prepared->model.graph.nodes()) {
            const int owner = s.owner[size_t(s.instance(n.id, copy))];
            QCOMPARE(w.scene()->itemOfNode(n.id)->fill(), clusterColor(owner));
        }
    }

    // Processes whose parent is this test (the tuner's timing workers).
    static int childProcesses()
    {
        int children = 0;
        const QString self = QString::number(getpid());
        QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
        while (it.hasNext()) {
            QFile stat(it.next() + QStringLiteral("/stat"));
            if (!stat.open(QIODevice::ReadOnly))
                continue;
            // pid (comm) state ppid ...: the fields after the last ')'.
            const QString line = QString::fromLocal8Bit(stat.readAll());
            const QStringList fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
            children += fields.size() > 1 && fields[1] == self;
        }
        return children;
    }
    static bool sameRun(const Schedule& a, const Schedule& b)
    {
        return a.clusters == b.clusters && a.workerThreads == b.workerThreads && a.threads == b.threads;
    }
    // A window at P = 2, B = 1 with squeezenet open.
    static std::unique_ptr<MainWindow> squeezenetAtTwo()
    {
        auto w = window();
        PlanSettings s = w->session()->settings();
        s.workers = 2;
        s.batch = 1;
        s.degree = 1;
        w->session()->setSettings(s);
        if (!open(*w, test::modelPath("squeezenet1_0")))
            return nullptr;
        return w;
    }

    // Adds graph attribute `attribute` (graph `name`) to `node`: `ops` in a
    // chain from `in`, a value of an enclosing graph; an "If" among them is a
    // nested If on the model's `cond`, its branches a Neg and an Abs.
    static void addBranch(onnx::NodeProto& node, const std::string& attribute, const std::string& name,
                          const std::vector<std::string>& ops, std::string in)
    {
        auto* a = node.add_attribute();
        a->set_name(attribute);
        a->set_type(onnx::AttributeProto::GRAPH);
        auto* g = a->mutable_g();
        g->set_name(name);
        for (size_t k = 0; k < ops.size(); ++k) {
            auto* n = g->add_node();
            n->set_op_type(ops[k]);
            n->set_name(name + "/" + ops[k]);
            if (ops[k] == "If") {
                n->add_input("cond");
                addBranch(*n, "then_branch", name + "_inner_then", {"Neg"}, in);
                addBranch(*n, "else_branch", name + "_inner_else", {"Abs"}, in);
            } else {
                n->add_input(in);
            }
            in = name + "_" + std::to_string(k);
            n->add_output(in);
        }
        auto* out = g->add_output();
        out->set_name(in);
        auto* tt = out->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        tt->mutable_shape()->add_dim()->set_dim_value(1);
        tt->mutable_shape()->add_dim()->set_dim_value(8);
    }
    // A model whose If reads an outer value in both branches: then_branch has
    // three nodes, else_branch two, the second an If of its own.
    static QString writeIfModel(const QString& dir)
    {
        test::OnnxBuilder b;
        b.input("x", {1, 8}).input("cond", {}, onnx::TensorProto::BOOL).output("y", {1, 8});
        b.node("Relu", {"x"}, {"r"}, "relu");
        auto& iff = b.node("If", {"cond"}, {"y"}, "the_if");
        addBranch(iff, "then_branch", "then_branch", {"Neg", "Abs", "Sigmoid"}, "r");
        addBranch(iff, "else_branch", "else_branch", {"Tanh", "If"}, "r");
        const QString path = QDir(dir).filePath("if.onnx");
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        const std::string bytes = b.bytes();
        f.write(bytes.data(), qint64(bytes.size()));
        return path;
    }
    static QStringList legendTexts(const GraphScene& scene)
    {
        QStringList out;
        for (const GraphScene::LegendEntry& entry : scene.legend())
            out << entry.text;
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RAMIEL_STUDIO_NO_DIALOGS", "1");
    }

    void openDrawsEveryNodeAndEdge()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        // The default passes ran on the 179 nodes of the file.
        auto prepared = w->session()->prepared();
        QCOMPARE(prepared->source->graph.nodeCount(), size_t(179));
        QCOMPARE(prepared->passes, defaultModelPasses());
        const Graph& g = prepared->model.graph;
        QVERIFY(g.nodeCount() < 179);
        // Expected items: operators, non-constant graph inputs, graph outputs.
        size_t inputs = 0;
        std::set<std::pair<ValueId, NodeId>> inputEdges;
        for (ValueId v : g.inputs())
            if (!g.value(v).isConstant()) {
                ++inputs;
                for (NodeId c : g.value(v).consumers)
                    inputEdges.insert({v, c});
            }
        const Topology topo = buildTopology(g);
        QCOMPARE(w->scene()->displayItems().size(), g.nodeCount() + inputs + g.outputs().size());
        QCOMPARE(w->scene()->edgeItems().size(), topo.edgeCount + inputEdges.size() + g.outputs().size());
        for (const Node& n : g.nodes())
            QVERIFY(w->scene()->itemOfNode(n.id) != nullptr);
        QVERIFY(w->windowTitle().contains("googlenet.onnx"));
        verifyClusterColors(*w);
        // The critical path is outlined and its edges drawn thick.
        auto a = w->session()->analysis();
        QVERIFY(a->metrics.criticalPath.size() > 10);
        for (NodeId n : a->metrics.criticalPath)
            QVERIFY(w->scene()->itemOfNode(n)->critical());
        int criticalEdges = 0;
        for (EdgeItem* e : w->scene()->edgeItems())
            criticalEdges += e->style() == EdgeItem::Style::Critical;
        QCOMPARE(criticalEdges, int(a->metrics.criticalPath.size()) - 1);
        QCOMPARE(w->loadsChart()->barCount(), int(a->plan.schedule.clusters.size()));
        QVERIFY(w->metrics()->tree()->topLevelItemCount() > 20);
        // The load axis writes its round ticks as numbers, a second's worth too (not 1e+03).
        const auto axes = w->loadsChart()->findChild<QChartView*>()->chart()->axes(Qt::Vertical);
        QCOMPARE(axes.size(), 1);
        const QString format = qobject_cast<QValueAxis*>(axes.first())->labelFormat();
        for (double tick : {0.25, 20.0, 1000.0, 2500.0, 40000.0})
            QCOMPARE(QString::asprintf(qPrintable(format), tick), QString::number(tick));
    }

    void settingsRecolorToTheSchedule_data()
    {
        QTest::addColumn<QString>("algorithm");
        QTest::addColumn<int>("workers");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("degree");
        QTest::newRow("heft P=2") << "heft" << 2 << 1 << 1;
        QTest::newRow("dsc P=4") << "dsc" << 4 << 1 << 1;
        QTest::newRow("linear P=4") << "linear" << 4 << 1 << 1;
        QTest::newRow("linear P=2 B=4 d=4") << "linear" << 2 << 4 << 4;
        QTest::newRow("serial") << "serial" << 2 << 1 << 1;
    }
    void settingsRecolorToTheSchedule()
    {
        QFETCH(QString, algorithm);
        QFETCH(int, workers);
        QFETCH(int, batch);
        QFETCH(int, degree);
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        TuningPanel* t = w->tuning();
        QSignalSpy spy(w->session(), &StudioSession::analysisChanged);
        t->algorithmBox()->setCurrentIndex(t->algorithmBox()->findData(algorithm));
        t->workersBox()->setValue(workers);
        t->batchBox()->setValue(batch);
        t->degreeBox()->setValue(degree);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->settings == w->session()->settings(), 30000);
        auto a = w->session()->analysis();
        QCOMPARE(QString::fromStdString(a->plan.schedule.algorithm), algorithm);
        QCOMPARE(a->settings.workers, workers);
        QCOMPARE(a->plan.schedule.degree, degree);
        QVERIFY(a->plan.validation.valid);
        // Every graph copy (d > 1) can be shown, each in its own clusters' colors.
        std::set<QRgb> colors;
        QCOMPARE(t->copyBox()->maximum(), degree - 1);
        for (int copy = 0; copy < degree; ++copy) {
            t->copyBox()->setValue(copy);
            verifyClusterColors(*w, copy);
            for (const Node& n : a->prepared->model.graph.nodes())
                colors.insert(w->scene()->itemOfNode(n.id)->fill().rgb());
        }
        QCOMPARE(colors.size(), std::min(a->plan.schedule.clusters.size(), size_t(20)));
        // d is limited to valid values.
        QCOMPARE(t->degreeBox()->maximum(), batch);
    }

    void passTogglesChangeTheGraph_data()
    {
        QTest::addColumn<QString>("pass");
        QTest::newRow("eliminate-identity") << "eliminate-identity";
        QTest::newRow("fuse-conv-activation") << "fuse-conv-activation";
    }
    void passTogglesChangeTheGraph()
    {
        QFETCH(QString, pass);
        auto w = window();
        w->session()->setPasses({});
        QVERIFY(open(*w, test::modelPath("googlenet")));
        QCOMPARE(w->session()->prepared()->model.graph.nodeCount(), size_t(179));
        QVERIFY(!w->tuning()->passBox(pass.toStdString())->isChecked());
        QSignalSpy changed(w->session(), &StudioSession::modelChanged);
        w->tuning()->passBox(pass.toStdString())->setChecked(true);
        QVERIFY(changed.wait(60000));
        auto p = w->session()->prepared();
        QCOMPARE(p->passStats.size(), size_t(1));
        const passes::PassStats& stats = p->passStats[0].second;
        QCOMPARE(stats.nodesBefore, 179);
        QVERIFY(stats.nodesAfter < stats.nodesBefore);
        QCOMPARE(p->model.graph.nodeCount(), size_t(stats.nodesAfter));
        // The scene shows the graph the pass left: one box per remaining node (plus input and output).
        QCOMPARE(w->scene()->displayItems().size(), size_t(stats.nodesAfter) + 2);
        for (const Node& n : p->model.graph.nodes())
            QVERIFY(w->scene()->itemOfNode(n.id));
        QVERIFY(w->tuning()->passStatsLabel()->text().contains(pass));
        // Unchecking restores the file's graph.
        w->tuning()->passBox(pass.toStdString())->setChecked(false);
        QVERIFY(changed.wait(60000));
        QCOMPARE(w->session()->prepared()->model.graph.nodeCount(), size_t(179));
        QCOMPARE(w->scene()->displayItems().size(), size_t(179 + 2));
    }

    void passRequirementsAreChecked()
    {
        auto w = window();
        w->session()->setPasses({"quantize"});
        const auto& p = w->session()->passes();
        QVERIFY(std::find(p.begin(), p.end(), "fuse-conv-bn") != p.end());
        QVERIFY(w->tuning()->passBox("fuse-conv-bn")->isChecked());
        QVERIFY(w->tuning()->passBox("quantize")->isChecked());
        // The clone box is the registry's scheduling pass and drives the schedule.
        w->tuning()->cloneBox()->setChecked(false);
        QVERIFY(!w->session()->settings().clone);
    }

    void findSelectsTheNode()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        const Graph& g = w->session()->prepared()->model.graph;
        FindBar* find = w->findBar();
        find->activate();
        find->edit()->setText("MaxPool");
        size_t maxPools = 0;
        for (const Node& n : g.nodes())
            maxPools += n.opType == "MaxPool";
        QCOMPARE(find->matches().size(), maxPools);
        QCOMPARE(g.node(w->scene()->selectedNode()).opType, std::string("MaxPool"));
        const NodeId first = w->scene()->selectedNode();
        find->next();
        QVERIFY(w->scene()->selectedNode() != first);
        find->previous();
        QCOMPARE(w->scene()->selectedNode(), first);
        QCOMPARE(w->properties()->node(), first);
        QVERIFY(w->properties()->tree()->topLevelItemCount() >= 5);  // operator, attributes, inputs, outputs, cost, schedule
        keepScreenshot(w.get(), "studio-find-properties.png");
        // By (part of a) name.
        const Node& target = g.node(NodeId(g.nodeCount() / 2));
        find->edit()->setText(QString::fromStdString(target.name));
        QCOMPARE(g.node(w->scene()->selectedNode()).name, target.name);
        find->edit()->setText("no such node anywhere");
        QVERIFY(find->matches().empty());
    }

    void exportWritesFilesAndFailsCleanly()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        QTemporaryDir dir;
        const QString svg = dir.filePath("g.svg"), png = dir.filePath("g.png"), json = dir.filePath("g.json");
        w->exportGraphImage(svg);
        w->exportGraphImage(png);
        w->exportJson(json);
        QFile s(svg);
        QVERIFY(s.open(QIODevice::ReadOnly));
        const QByteArray svgText = s.readAll();
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.count("<path") > 100);
        const QImage image(png);
        QVERIFY(!image.isNull());
        // Full resolution: twice the scene's size, not a screen grab.
        QVERIFY(image.width() >= int(w->scene()->sceneRect().width() * 1.9));
        // With its legend, like the view: each cluster's swatch and the critical path's red
        // in the top left corner, where the graph leaves room for it.
        auto a = w->session()->analysis();
        QVERIFY(image.height() > int(w->scene()->sceneRect().height() * 1.9) + 40);
        const QImage corner = image.copy(0, 0, 400, 220);
        auto hasColor = [](const QImage& img, const QColor& c) {
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x)
                    if (img.pixelColor(x, y) == c)
                        return true;
            return false;
        };
        for (size_t c = 0; c < a->loads.size(); ++c)
            QVERIFY2(hasColor(corner, clusterColor(int(c))), qPrintable(QString("cluster %1").arg(c)));
        QVERIFY(hasColor(corner, sceneTheme(false).critical));
        QVERIFY(svgText.contains("critical path ("));
        QVERIFY(svgText.contains("cluster 0: "));
        image.save(QDir(RAMIEL_SCREENSHOT_DIR).filePath("studio-export.png"));
        // Without it when the legend is hidden in the view.
        w->view()->setLegendVisible(false);
        w->exportGraphImage(png);
        QCOMPARE(QImage(png).height(), int(std::ceil(w->scene()->sceneRect().height() * 2)));
        w->view()->setLegendVisible(true);
        QFile j(json);
        QVERIFY(j.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(j.readAll()).object();
        QCOMPARE(doc["info"].toObject()["schema"].toString(), QString("ramiel.info/1"));
        QCOMPARE(doc["schedule"].toObject()["schema"].toString(), QString("ramiel.schedule/1"));

        // A folder that cannot be written: an error, and nothing written or lost.
        QFile blocker(dir.filePath("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.write("keep me");
        blocker.close();
        w->exportGraphImage(dir.filePath("not-a-folder/g.png"));
        QVERIFY(w->statusBar()->currentMessage().contains("not-a-folder"));
        QVERIFY(blocker.open(QIODevice::ReadOnly));
        QCOMPARE(blocker.readAll(), QByteArray("keep me"));
        if (geteuid() != 0) {  // root writes anywhere
            QTemporaryDir ro;
            QFile::setPermissions(ro.path(), QFile::ReadOwner | QFile::ExeOwner);
            w->exportJson(ro.filePath("g.json"));
            QVERIFY(!QFile::exists(ro.filePath("g.json")));
            QFile::setPermissions(ro.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        }
    }

    void exportCodeRunsAndMatches()
    {
        auto w = window();
        QVERIFY(open(*w, test::sourcePath("resources/models/inception_sample.onnx")));
        CodeExportDialog dialog(w->session()->analysis());
        QSignalSpy preview(&dialog, &CodeExportDialog::previewReady);
        QVERIFY(preview.wait(60000));
        QCOMPARE(dialog.preview()->count(), 3);  // model.py, run.py, README.md
        QCOMPARE(dialog.preview()->tabText(0), QString("model.py"));
        QVERIFY(qobject_cast<QPlainTextEdit*>(dialog.preview()->widget(0))->toPlainText().contains("def _worker_0"));
        dialog.show();
        keepScreenshot(&dialog, "studio-export-python.png");
        dialog.languageBox()->setCurrentIndex(1);
        QVERIFY(preview.wait(60000));
        QCOMPARE(dialog.preview()->count(), 3);  // main.cpp, CMakeLists.txt, README.md
        dialog.languageBox()->setCurrentIndex(0);
        QVERIFY(preview.wait(60000));

        QTemporaryDir dir;
        dialog.folderEdit()->setText(dir.filePath("sample-py"));
        QSignalSpy exported(&dialog, &CodeExportDialog::exported);
        dialog.exportToFolder();
        QVERIFY(exported.wait(60000));
        QVERIFY(exported.first().first().toBool());
        QProcess python;
        python.setWorkingDirectory(dir.filePath("sample-py"));
        python.start("/usr/bin/python3", {"run.py"});
        QVERIFY(python.waitForFinished(180000));
        const QString out = python.readAllStandardOutput();
        QVERIFY2(python.exitCode() == 0, qPrintable(out + python.readAllStandardError()));
        QVERIFY2(out.contains(" ok"), qPrintable(out));
        QVERIFY(out.contains("parallel"));

        // An unwritable folder: a clear error naming it, nothing lost.
        QFile blocker(dir.filePath("file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.write("keep");
        blocker.close();
        dialog.folderEdit()->setText(dir.filePath("file/code"));
        exported.clear();
        dialog.exportToFolder();
        QVERIFY(exported.wait(60000));
        QVERIFY(!exported.first().first().toBool());
        QVERIFY(exported.first().at(1).toString().contains("file"));
        QVERIFY(dialog.status()->text().startsWith("Export failed"));
        QVERIFY(blocker.open(QIODevice::ReadOnly));
        QCOMPARE(blocker.readAll(), QByteArray("keep"));
    }

    void badFileKeepsThePreviousModel()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("squeezenet1_0")));
        QSignalSpy ready(w.get(), &MainWindow::modelReady);
        QSignalSpy failed(w->session(), &StudioSession::failed);
        const QString bad = test::sourcePath("tests/data/bad/truncated.onnx");
        QVERIFY(QFile::exists(bad));
        w->openFile(bad);
        QVERIFY(ready.wait(30000));
        QCOMPARE(ready.first().first().toBool(), false);
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed.first().at(0).toString(), bad);
        QVERIFY(!failed.first().at(1).toString().isEmpty());
        QVERIFY(QString::fromStdString(w->session()->prepared()->path).endsWith("squeezenet1_0.onnx"));
        QVERIFY(w->windowTitle().contains("squeezenet1_0"));
    }

    void cancelKeepsThePreviousModel()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("squeezenet1_0")));
        QSignalSpy busy(w->session(), &StudioSession::busyChanged);
        w->openFile(test::modelPath("densenet121"));
        QVERIFY(w->session()->busy());
        w->session()->cancel();
        QVERIFY(!w->session()->busy());
        QTest::qWait(3000);  // the abandoned load finishes in the background and is dropped
        QVERIFY(QString::fromStdString(w->session()->prepared()->path).endsWith("squeezenet1_0.onnx"));
        QCOMPARE(w->scene()->displayItems().size(),
                 w->session()->layout()->display.items.size());
    }

    void settingsChangedWhileOpeningAreApplied()
    {
        auto w = window();
        w->openFile(test::modelPath("inception_v3"));
        PlanSettings s = w->session()->settings();
        s.algorithm = "heft";
        s.workers = 3;
        w->session()->setSettings(s);  // while the model is still loading
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis() && w->session()->analysis()->settings == s, 60000);
        QCOMPARE(w->session()->analysis()->prepared, w->session()->prepared());
        verifyClusterColors(*w);
    }

    void runUpdatesTheChart()
    {
        auto w = window();
        PlanSettings two = w->session()->settings();
        two.workers = 2;
        w->session()->setSettings(two);
        QVERIFY(open(*w, test::sourcePath("resources/models/inception_sample.onnx")));
        RunPanel* run = w->runPanel();
        run->iterationsBox()->setValue(20);  // medians past the first runs (kernels warming up), for the screenshot
        QSignalSpy done(run, &RunPanel::finished);
        run->start();
        QVERIFY(run->running());
        QVERIFY(done.wait(180000));
        QVERIFY2(done.first().first().toBool(), qPrintable(done.first().at(1).toString()));
        QCOMPARE(run->serialPoints(), 20);
        QCOMPARE(run->parallelPoints(), 20);
        QVERIFY(run->hasProfile());
        // Rows named by their workers and threads: serial on 1 and on P threads, then the plan.
        const auto planned = w->session()->analysis();
        const size_t clusters = planned->plan.schedule.clusters.size();
        QCOMPARE(run->rowLabels().size(), 3);
        QCOMPARE(run->rowLabels()[0], QString("serial, 1 worker x 1 thread"));
        QCOMPARE(run->rowLabels()[1], QString("serial, 1 worker x 2 threads"));
        QCOMPARE(run->rowLabels()[2], (clusters == 1 ? QString("serial, ") : QString("linear, ")) +
                                          QString::fromStdString(describeThreads(planned->plan.schedule)));
        {
            const QString text = run->summaryLabel()->text();
            QVERIFY2(text.contains("inter-op bound " + QString::number(planned->bound, 'f', 2) + "x"), qPrintable(text));
            QVERIFY2(text.contains("vs best serial") && text.contains("over the best serial"), qPrintable(text));
            for (const QString& label : run->rowLabels())
                QVERIFY2(text.contains(label), qPrintable(text));
            QVERIFY2(!text.contains("parallel"), qPrintable(text));
            // Timed as bench times: each configuration alone, in turns.
            QVERIFY2(text.contains("each configuration in its own process"), qPrintable(text));
            // The machine around the runs, as bench and Tune give it.
            QVERIFY2(text.contains("host: ") && text.contains("; before, load average "), qPrintable(text));
            QVERIFY2(run->workersLabel()->text().contains("W1 busy"), qPrintable(run->workersLabel()->text()));
        }
        w->findChild<QDockWidget*>("run")->raise();
        w->resizeDocks({w->findChild<QDockWidget*>("run")}, {900}, Qt::Horizontal);
        w->resizeDocks({w->findChild<QDockWidget*>("run")}, {330}, Qt::Vertical);
        keepScreenshot(w.get(), "studio-run.png");
        action(*w, "Dark Theme")->setChecked(true);
        keepScreenshot(w.get(), "studio-run-dark.png");
        action(*w, "Dark Theme")->setChecked(false);
        // One click: the profile becomes the costs the schedule uses.
        QSignalSpy analysis(w->session(), &StudioSession::analysisChanged);
        run->useProfile();
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->costs.measured, 30000);
        QCOMPARE(w->tuning()->costsBox()->currentIndex(), 1);
        verifyClusterColors(*w);

        // Another plan: the figures are labelled as the earlier plan's.
        PlanSettings s = w->session()->settings();
        s.algorithm = "heft";
        w->session()->setSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->settings.algorithm == "heft", 30000);
        QLabel* summary = run->summaryLabel();
        QVERIFY2(summary->text().contains("the plan has changed"), qPrintable(summary->text()));

        // Another model: nothing of the last one stays (results, profile, measured costs).
        QVERIFY(open(*w, test::modelPath("squeezenet1_0")));
        QCOMPARE(run->serialPoints(), 0);
        QCOMPARE(run->parallelPoints(), 0);
        QVERIFY(!run->hasProfile());
        QVERIFY(!summary->text().contains("iterations"));
        QVERIFY(!summary->text().contains("host: "));
        QCOMPARE(w->session()->settings().costs, std::string("static"));
        QCOMPARE(w->tuning()->costsBox()->currentIndex(), 0);
        QVERIFY(!w->session()->analysis()->costs.measured);
    }

    // One worker is serial, whatever its threads: never "parallel".
    void runNamesAOneWorkerPlanSerial()
    {
        auto w = window();
        PlanSettings s = w->session()->settings();
        s.algorithm = "serial";
        s.workers = 2;
        w->session()->setSettings(s);
        QVERIFY(open(*w, test::sourcePath("resources/models/inception_sample.onnx")));
        QCOMPARE(w->session()->analysis()->plan.schedule.clusters.size(), size_t(1));
        RunPanel* run = w->runPanel();
        run->iterationsBox()->setValue(2);
        QSignalSpy done(run, &RunPanel::finished);
        run->start();
        QVERIFY(done.wait(180000));
        QVERIFY2(done.first().first().toBool(), qPrintable(done.first().at(1).toString()));
        const QString planLabel = run->rowLabels().last();
        QVERIFY2(planLabel.startsWith("serial, 1 worker x "), qPrintable(planLabel));
        QVERIFY(!run->summaryLabel()->text().contains("parallel"));
        QCOMPARE(w->gantt()->caption().section("  |  ", 0, 0),
                 QString::fromStdString(describeThreads(w->session()->analysis()->plan.schedule)));
    }

    // Tune at a long budget, cancelled while its timing processes run: idle again, none left.
    void tuneReportsProgressAndCancels()
    {
        auto w = squeezenetAtTwo();
        QVERIFY(w);
        TunePanel* t = w->tunePanel();
        t->budgetBox()->setValue(600);
        QSignalSpy progress(t, &TunePanel::progressed);
        QSignalSpy done(t, &TunePanel::finished);
        action(*w, "Tune...")->trigger();
        QVERIFY(t->running());
        QVERIFY(!t->tuneButton()->isEnabled());
        QVERIFY(t->cancelButton()->isEnabled());
        QVERIFY(w->findChild<QDockWidget*>("tune")->isVisible());
        auto measuring = [&] {
            for (const auto& p : progress)
                if (p.first().toString() == "measuring")
                    return true;
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(measuring() || !done.isEmpty(), 300000);
        QVERIFY2(done.isEmpty(), "the tune ended before it could be cancelled");
        QCOMPARE(progress.first().first().toString(), QString("profiling"));
        QVERIFY(progress.first().at(2).toInt() > 0);
        QVERIFY2(t->progressBar()->format().startsWith("measuring"), qPrintable(t->progressBar()->format()));
        QVERIFY(childProcesses() > 0);  // the timing workers
        t->cancelButton()->click();
        QVERIFY(done.wait(120000));
        QCOMPARE(done.first().first().toBool(), false);
        QCOMPARE(done.first().at(1).toString(), QString("cancelled"));
        QVERIFY(!t->running());
        QVERIFY(t->tuneButton()->isEnabled());
        QVERIFY(!t->cancelButton()->isEnabled());
        QCOMPARE(t->table()->rowCount(), 0);
        QVERIFY(!t->result());
        QVERIFY(t->statusLabel()->text().startsWith("Cancelled"));
        QTRY_COMPARE_WITH_TIMEOUT(childProcesses(), 0, 5000);
    }

    // A short tune: the table, the chosen row, the verdict; applying rows shows their exact schedules.
    void tuneShowsRowsAndAppliesThem()
    {
        auto w = squeezenetAtTwo();
        QVERIFY(w);
        TunePanel* t = w->tunePanel();
        t->budgetBox()->setValue(5);
        QSignalSpy done(t, &TunePanel::finished);
        w->startTune();
        QVERIFY(done.wait(300000));
        QVERIFY2(done.first().first().toBool(), qPrintable(done.first().at(1).toString()));
        QTRY_COMPARE_WITH_TIMEOUT(childProcesses(), 0, 5000);
        auto r = t->result();
        QVERIFY(r);
        QCOMPARE(r->cores, 2);
        QTableWidget* table = t->table();
        QCOMPARE(table->rowCount(), int(r->candidates.size()));
        QCOMPARE(table->columnCount(), int(TunePanel::Columns));
        int marked = 0;
        for (int row = 0; row < table->rowCount(); ++row) {
            const auto& c = r->candidates[size_t(row)];
            const QString name = table->item(row, TunePanel::Configuration)->text();
            marked += name.startsWith(QChar(0x2605));
            QCOMPARE(name.mid(2).trimmed(), QString::fromStdString(c.config.title()));
            QCOMPARE(table->item(row, TunePanel::Threads)->text(), QString::fromStdString(c.config.threadsText()));
            QCOMPARE(table->item(row, TunePanel::VsOneThread)->text().isEmpty(), !c.measuredAlone());
        }
        QCOMPARE(marked, 1);
        QVERIFY(table->item(int(r->chosen), TunePanel::Configuration)->text().startsWith(QChar(0x2605)));
        QVERIFY(table->item(int(r->chosen), TunePanel::Configuration)->font().bold());
        QCOMPARE(table->item(int(r->serialOneThread), TunePanel::VsOneThread)->text(), QString("1.00x"));
        QCOMPARE(table->item(int(r->bestSerial), TunePanel::VsBestSerial)->text(), QString("1.00x"));
        QVERIFY(t->verdictLabel()->text().contains(QString::fromStdString(r->verdict).toHtmlEscaped()));
        QVERIFY(t->statusLabel()->text().startsWith("P = 2, B = 1"));
        QVERIFY2(t->statusLabel()->text().contains("host: 2 CPUs; before, load average ") &&
                     t->statusLabel()->text().contains("round trip of "),  // two CPUs, as cores == 2 says
                 qPrintable(t->statusLabel()->text()));
        QCOMPARE(table->currentRow(), int(r->chosen));
        w->resizeDocks({w->findChild<QDockWidget*>("tune")}, {900}, Qt::Horizontal);
        keepScreenshot(w.get(), "studio-tune.png");

        // A schedule on two workers, with the passes off if one was tried.
        int pick = -1;
        for (size_t i = 0; i < r->candidates.size(); ++i) {
            const auto& c = r->candidates[i].config;
            if (!c.serial() && c.schedule->clusters.size() >= 2 && (pick < 0 || c.passes == "none"))
                pick = int(i);
        }
        QVERIFY(pick >= 0);
        const pipeline::RunConfig& config = r->candidates[size_t(pick)].config;
        t->applyRow(pick);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->prepared->passes == passes::parsePassList(config.passes) &&
                                     sameRun(w->session()->analysis()->plan.schedule, *config.schedule),
                                 30000);
        QVERIFY(w->session()->shownConfig());
        QCOMPARE(table->currentRow(), pick);  // the row shown is the row selected
        QCOMPARE(w->tuning()->algorithmBox()->currentData().toString(),
                 QString::fromStdString(config.settings.algorithm));
        QCOMPARE(w->tuning()->workersBox()->value(), config.settings.workers);
        QCOMPARE(w->tuning()->degreeBox()->value(), config.settings.degree);
        QCOMPARE(w->tuning()->passBox("fuse-conv-activation")->isChecked(), config.passes != "none");
        QVERIFY(w->gantt()->caption().startsWith(QString::fromStdString(config.threadsText())));
        QCOMPARE(w->scene()->itemOfNode(0)->fill(), clusterColor(config.schedule->owner[size_t(config.schedule->instance(0, 0))]));

        // A serial row: one worker on its threads, the Tuning panel on "serial".
        int serial = -1;
        for (size_t i = 0; i < r->candidates.size(); ++i)
            if (r->candidates[i].config.serial() && r->candidates[i].config.serialThreads == 2)
                serial = int(i);
        QVERIFY(serial >= 0);
        t->applyRow(serial);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->plan.schedule.clusters.size() == 1, 30000);
        QCOMPARE(w->session()->analysis()->plan.schedule.workerThreads, std::vector<int32_t>{2});
        QCOMPARE(w->tuning()->algorithmBox()->currentData().toString(), QString("serial"));
        QVERIFY(w->gantt()->caption().startsWith("1 worker x 2 threads"));
        QCOMPARE(t->result(), r);  // other passes, same file: the table stays

        // For the eye: a row whose items use several threads (hatched in the Gantt), light and dark.
        int threaded = serial;
        for (size_t i = 0; i < r->candidates.size(); ++i) {
            const auto& c = r->candidates[i].config;
            if (!c.serial() && c.schedule->clusters.size() >= 2 && c.schedule->maxThreads() > 1) {
                threaded = int(i);
                break;
            }
        }
        t->applyRow(threaded);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->plan.schedule.maxThreads() > 1, 30000);
        QCOMPARE(table->currentRow(), threaded);
        w->resizeDocks({w->findChild<QDockWidget*>("tune")}, {420}, Qt::Vertical);
        keepScreenshot(w.get(), "studio-tune-applied.png");
        action(*w, "Dark Theme")->setChecked(true);
        keepScreenshot(w.get(), "studio-tune-dark.png");
        action(*w, "Dark Theme")->setChecked(false);

        // Any change of a knob plans again (another algorithm than the applied row's: it may be HEFT).
        const std::string other = w->session()->settings().algorithm == "heft" ? "dsc" : "heft";
        w->tuning()->algorithmBox()->setCurrentIndex(w->tuning()->algorithmBox()->findData(QString::fromStdString(other)));
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->settings.algorithm == other, 30000);
        QVERIFY(!w->session()->shownConfig());

        // The chosen configuration as 'ramiel tune -o' writes it opens with its schedule.
        auto again = window();
        QSignalSpy ready(again.get(), &MainWindow::modelReady);
        const pipeline::RunConfig& chosen = r->candidates[r->chosen].config;
        again->openWithConfig(test::modelPath("squeezenet1_0"), pipeline::runConfigFromJson(pipeline::runConfigToJson(chosen), "chosen"));
        QVERIFY(ready.wait(60000));
        QVERIFY(sameRun(again->session()->analysis()->plan.schedule,
                        pipeline::scheduleFor(chosen, *again->session()->prepared())));
    }

    void compareHoldsTwoScenes()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("inception_v3")));
        CompareView* c = w->compareView();
        QVERIFY(!c->analysis(0));  // nothing is computed for a hidden view
        w->centralTabs()->setCurrentWidget(c);
        QTRY_VERIFY_WITH_TIMEOUT(c->analysis(0) && c->analysis(1), 30000);
        QCOMPARE(c->scene(0)->displayItems().size(), w->scene()->displayItems().size());
        QCOMPARE(c->scene(1)->displayItems().size(), w->scene()->displayItems().size());
        QCOMPARE(c->analysis(0)->plan.schedule.algorithm, std::string("linear"));
        QCOMPARE(c->analysis(1)->plan.schedule.algorithm, std::string("heft"));
        QVERIFY(c->table()->topLevelItemCount() > 5);
        keepScreenshot(w.get(), "studio-compare.png");
        action(*w, "Dark Theme")->setChecked(true);
        keepScreenshot(w.get(), "studio-compare-dark.png");
        action(*w, "Dark Theme")->setChecked(false);
        // Selection and zoom follow from one side to the other.
        const NodeId n = NodeId(50);
        c->scene(0)->selectNode(n);
        QCOMPARE(c->scene(1)->selectedNode(), n);
        c->view(1)->setZoom(0.5);
        QCOMPARE(c->view(0)->zoom(), 0.5);
        // Changing one side re-schedules only that side.
        c->algorithmBox(1)->setCurrentIndex(c->algorithmBox(1)->findData("dsc"));
        QTRY_COMPARE_WITH_TIMEOUT(c->analysis(1)->plan.schedule.algorithm, std::string("dsc"), 30000);
        QCOMPARE(c->analysis(0)->plan.schedule.algorithm, std::string("linear"));
    }

    // Ramiel's fused nodes are drawn as what they compute: FusedConv as its convolution,
    // summand and activation, MatMulAdd as MatMul+Add, Silu by its function's name,
    // FusedBatchNorm as its Concat (more than one part), normalization and activation.
    void fusedNodesReadAsWhatTheyCompute()
    {
        test::OnnxBuilder b;
        b.input("x", {1, 4, 8, 8}).input("t", {2, 3, 8}).output("y").output("m").output("s");
        b.initializer("w", {4, 4, 1, 1}, 0.5f).initializer("k", {8, 5}, 0.5f).initializer("c", {5}, 0.5f);
        auto& conv = b.node(kFusedConv, {"x", "w", "", "x"}, {"y"}, "conv");
        conv.set_domain(kRamielDomain);
        auto* a = conv.add_attribute();
        a->set_name("activation");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("Relu");
        b.node(kMatMulAdd, {"t", "k", "c"}, {"m"}, "linear").set_domain(kRamielDomain);
        b.node(kSilu, {"t"}, {"s"}, "silu").set_domain(kRamielDomain);
        b.output("n1").output("n2");
        for (const char* stat : {"scale", "bias", "mean", "var"})
            b.initializer(stat, {8}, 1.0f);
        auto& dense = b.node(kFusedBatchNorm, {"x", "x", "scale", "bias", "mean", "var"}, {"n1"}, "dense");
        dense.set_domain(kRamielDomain);
        auto* act = dense.add_attribute();
        act->set_name("activation");
        act->set_type(onnx::AttributeProto::STRING);
        act->set_s("Relu");
        b.initializer("scale4", {4}, 1.0f);
        b.node(kFusedBatchNorm, {"x", "scale4", "scale4", "scale4", "scale4"}, {"n2"}, "plain").set_domain(kRamielDomain);
        auto* ramiel = b.model().add_opset_import();
        ramiel->set_domain(kRamielDomain);
        ramiel->set_version(1);
        const Model m = loadOnnxFromBytes(b.bytes(), "fused.onnx", {});
        const DisplayGraph d = displayGraphOf(m.graph, false);
        QStringList titles;
        for (const DisplayItem& item : d.items)
            if (item.kind == DisplayItem::Kind::Operator)
                titles << QString::fromStdString(item.title);
        titles.sort();
        QCOMPARE(titles, (QStringList{"BatchNorm", "Concat+BatchNorm+Relu", "Conv+Add+Relu", "MatMul+Add", "Silu"}));
    }

    // Labels elided to their boxes, table cells whole in their tooltips, byte
    // counts in binary units, differences that matter in bold, a legend that
    // leaves the graph's input alone, no ticks on an empty chart.
    void textFitsItsPlace()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        QSignalSpy laid(w->session(), &StudioSession::layoutChanged);
        w->session()->setLayoutOptions(false, true);  // node names under the operators
        QVERIFY(laid.wait(30000));
        int elided = 0;
        QFont small;
        small.setPointSizeF(7.5);
        for (NodeItem* item : w->scene()->displayItems()) {
            const QRectF box = item->shape().boundingRect();
            QVERIFY2(QFontMetricsF(small).horizontalAdvance(item->shownSubtitle()) <= box.width(),
                     qPrintable(item->shownSubtitle()));
            if (item->shownSubtitle().contains(QChar(0x2026)))
                ++elided;
        }
        QVERIFY(elided > 0);  // googlenet's names are longer than their boxes

        // The legend is in a corner where it covers no input or output.
        auto inputOnScreen = [&] {
            for (NodeItem* item : w->scene()->displayItems())
                if (item->isTerminal())
                    return w->view()->mapFromScene(item->sceneBoundingRect()).boundingRect();
            return QRect();
        };
        QVERIFY(!w->view()->legendRect().isEmpty());
        QVERIFY(!w->view()->legendRect().intersects(inputOnScreen()));
        w->session()->setLayoutOptions(true, true);  // left to right: the input on the left
        QVERIFY(laid.wait(30000));
        for (int zoom : {0, 1}) {
            zoom ? w->view()->fitToWindow() : w->view()->showReadable();
            QVERIFY2(!w->view()->legendRect().intersects(inputOnScreen()), zoom ? "fit" : "readable");
        }

        // Properties: the name column leaves the values room; every cell whole in its tooltip.
        w->scene()->selectNode(w->session()->analysis()->metrics.criticalPath.at(3));
        QTreeWidget* tree = w->properties()->tree();
        QVERIFY(tree->topLevelItemCount() > 3);
        QVERIFY(tree->columnWidth(0) <= tree->viewport()->width() / 2);
        int cells = 0;
        for (QTreeWidgetItemIterator it(tree); *it; ++it)
            for (int c = 0; c < 2; ++c)
                if (!(*it)->isFirstColumnSpanned() && !(*it)->text(c).isEmpty()) {
                    QCOMPARE((*it)->toolTip(c), (*it)->text(c));
                    ++cells;
                }
        QVERIFY(cells > 10);
        keepScreenshot(w.get(), "studio-text-fits.png");

        // Bytes in binary units; no "KiB" counts in the thousands.
        const QVector<MetricRow> rows = metricRows(*w->session()->analysis());
        bool sawBytes = false;
        for (const MetricRow& r : rows)
            if (r.name == "Cross-cluster edges") {
                QVERIFY2(QRegularExpression("^\\d+ \\(\\d{1,3}(\\.\\d+)? (B|KiB|MiB|GiB)\\)$").match(r.value).hasMatch(),
                         qPrintable(r.value));
                sawBytes = true;
            }
        QVERIFY(sawBytes);
        // Compare bolds figures 1 % apart or more, not 0.01 %; text when it differs.
        MetricRow a{"s", "Makespan", "10.00 ms", {}, 0.010};
        MetricRow b = a;
        b.number = 0.010001;
        QVERIFY(!rowsDiffer(a, b));
        b.number = 0.0102;
        QVERIFY(rowsDiffer(a, b));
        MetricRow ta{"s", "Valid", "yes", {}}, tb{"s", "Valid", "NO", {}};
        QVERIFY(rowsDiffer(ta, tb));
        QVERIFY(!rowsDiffer(ta, ta));

        // The Run chart before any run: no axes, so no "0 0 0 0 1" ticks.
        for (QAbstractAxis* axis : w->runPanel()->chartView()->chart()->axes())
            QVERIFY(!axis->isVisible());
        QVERIFY(!w->runPanel()->chartView()->chart()->title().isEmpty());
    }

    // View > Dark Theme reaches what Studio draws itself: the canvas, its legend
    // and minimap, Compare's scenes, unchecked check boxes; the Run chart keeps
    // its series colors.
    void darkThemeReachesTheCanvas()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        QVERIFY(!w->scene()->theme().dark);
        w->setDarkTheme(true);
        QVERIFY(isDark(qApp->palette()));
        QTRY_VERIFY(w->scene()->theme().dark);  // the palette reaches the widgets through posted events
        QCOMPARE(w->scene()->backgroundBrush().color(), sceneTheme(true).background);
        QVERIFY(w->compareView()->scene(0)->theme().dark);
        QTest::qWait(50);
        const QImage canvas = w->view()->viewport()->grab().toImage();
        int dark = 0;
        for (int y = 0; y < canvas.height(); y += 7)
            for (int x = 0; x < canvas.width(); x += 7)
                dark += QColor(canvas.pixel(x, y)).lightness() < 60;
        QVERIFY2(dark > (canvas.width() / 7) * (canvas.height() / 7) / 2, "the canvas is not dark");
        // The legend's panel is dark too, with light text on it.
        const QRect legend = w->view()->legendRect();
        QVERIFY(!legend.isEmpty());
        QVERIFY(QColor(canvas.pixel(legend.right() - 4, legend.bottom() - 3)).lightness() < 80);
        int light = 0;
        for (int y = legend.top(); y < legend.bottom(); ++y)
            for (int x = legend.left() + 28; x < legend.right(); ++x)
                light += QColor(canvas.pixel(x, y)).lightness() > 170;
        QVERIFY(light > 50);
        // An unchecked check box shows its box: light pixels where the indicator is.
        QCheckBox* box = nullptr;
        for (QCheckBox* c : w->tuning()->findChildren<QCheckBox*>())
            if (!c->isChecked() && c->isEnabled() && c->isVisible())
                box = c;
        QVERIFY(box);
        const QImage boxImage = box->grab().toImage();
        int frame = 0;
        for (int y = 0; y < boxImage.height(); ++y)
            for (int x = 0; x < std::min(20, boxImage.width()); ++x)
                frame += QColor(boxImage.pixel(x, y)).lightness() > 100;
        QVERIFY2(frame > 10, qPrintable(box->text()));
        // The Run chart's series keep their colors in both themes.
        auto seriesColors = [&] {
            QList<QColor> colors;
            for (QAbstractSeries* s : w->runPanel()->chartView()->chart()->series())
                colors << static_cast<QLineSeries*>(s)->pen().color();
            return colors;
        };
        const QList<QColor> darkColors = seriesColors();
        QCOMPARE(darkColors, (QList<QColor>{runSeriesColor(0), runSeriesColor(1), runSeriesColor(2)}));
        keepScreenshot(w.get(), "studio-dark.png");
        w->setDarkTheme(false);
        QTRY_VERIFY(!w->scene()->theme().dark);
        QCOMPARE(seriesColors(), darkColors);
    }

    // Hovering a box says what it is and how it is scheduled; a Gantt bar says
    // which node on which worker when; right-click copies a name; clicking a
    // graph input shows its properties.
    void tooltipsCopyNamesAndTerminals()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        auto a = w->session()->analysis();
        const Graph& g = a->prepared->model.graph;
        for (const Node& n : g.nodes()) {
            const QString tip = w->scene()->itemOfNode(n.id)->toolTip();
            for (const QString& part : {QString::fromStdString(n.name), QString("FLOPs"), QString("cluster"),
                                        QString("t-level"), QString("b-level"),
                                        QString::fromStdString(g.value(n.outputs[0]).type.toString())})
                QVERIFY2(tip.contains(part), qPrintable(tip + " lacks " + part));
            QCOMPARE(tip.contains("critical path"), bool(a->onCriticalPath[size_t(n.id)]));
        }
        // Gantt: every bar's tooltip names its node, its worker and its times.
        GanttChart* gantt = w->gantt();
        const auto& entries = a->plan.simulation.gantt;
        QVERIFY(!entries.empty());
        for (size_t i = 0; i < entries.size(); i += 7) {
            const QRectF bar = gantt->barRect(int(i));
            if (bar.width() < 3)
                continue;  // a sliver: the neighbour's tooltip may win
            const QString tip = gantt->toolTipAt(bar.center());
            const Node& n = g.node(a->plan.schedule.node(entries[i].instance));
            QVERIFY2(tip.contains(QString::fromStdString(n.name)), qPrintable(tip));
            QVERIFY2(tip.contains(QStringLiteral("worker W%1").arg(entries[i].worker)), qPrintable(tip));
            QVERIFY2(tip.contains(" to "), qPrintable(tip));
        }
        // Copy Name on a box, an input and an edge.
        auto copied = [&](QGraphicsItem* item) {
            std::unique_ptr<QMenu> menu(w->view()->contextMenuFor(item, w.get()));
            QAction* copy = menu->findChild<QAction*>("copyName");
            if (!copy)
                return QString("(no Copy Name)");
            QGuiApplication::clipboard()->clear();
            copy->trigger();
            return QGuiApplication::clipboard()->text();
        };
        const Node& some = g.node(NodeId(5));
        QCOMPARE(copied(w->scene()->itemOfNode(some.id)), QString::fromStdString(some.name));
        NodeItem* input = w->scene()->displayItems().front();
        QVERIFY(input->isTerminal());
        const ValueId x = w->session()->layout()->display.items.front().value;
        QCOMPARE(copied(input), QString::fromStdString(g.value(x).name));
        EdgeItem* edge = w->scene()->edgeItems().front();
        QCOMPARE(copied(edge), QString::fromStdString(g.value(w->session()->layout()->display.edges.front().value).name));
        QVERIFY(!w->view()->contextMenuFor(nullptr, w.get())->findChild<QAction*>("copyName"));
        // What the tooltip looks like, to look at.
        const NodeId critical = a->metrics.criticalPath.at(4);
        QToolTip::showText(QPoint(100, 100), w->scene()->itemOfNode(critical)->toolTip(), w->view()->viewport());
        for (QWidget* top : QApplication::topLevelWidgets())
            if (top->inherits("QTipLabel") && top->isVisible())
                keepScreenshot(top, "studio-tooltip.png");
        QToolTip::hideText();

        // A click on the graph input shows it in Properties.
        w->view()->centerOn(input);
        QTest::mouseClick(w->view()->viewport(), Qt::LeftButton, {}, w->view()->mapFromScene(input->pos()));
        QCOMPARE(w->scene()->selectedValue(), x);
        QCOMPARE(w->properties()->value(), x);
        QTreeWidget* tree = w->properties()->tree();
        QCOMPARE(tree->topLevelItem(0)->text(0), QString("Graph input"));
        QCOMPARE(tree->topLevelItem(0)->child(0)->text(1), QString::fromStdString(g.value(x).name));
        // And a box shows its node again.
        w->scene()->selectNode(some.id);
        QCOMPARE(w->properties()->node(), some.id);
        QCOMPARE(w->properties()->value(), kNone);
    }

    // A weight clicked among a node's inputs in Properties: its shape, type,
    // statistics (core's tensorStats) and histogram.
    void initializerIsInspected()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        const Graph& g = w->session()->prepared()->model.graph;
        NodeId conv = kNone;
        for (const Node& n : g.nodes())
            if (n.inputs.size() > 1 && n.inputs[1] != kNone && g.value(n.inputs[1]).isConstant() &&
                g.value(n.inputs[1]).initializer->numel() > 1000) {
                conv = n.id;
                break;
            }
        QVERIFY(conv != kNone);
        const ValueId weight = g.node(conv).inputs[1];
        w->scene()->selectNode(conv);
        InitializerView* view = w->properties()->initializerView();
        QVERIFY(!view->isVisible());
        QTreeWidgetItem* row = w->properties()->rowOf(weight);
        QVERIFY(row);
        w->properties()->tree()->setCurrentItem(row);
        QCOMPARE(view->value(), weight);
        QVERIFY(view->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(view->stats().has_value(), 10000);
        const auto expected = tensorStats(*g.value(weight).initializer, 40);
        QVERIFY(expected);
        QCOMPARE(view->stats()->min, expected->min);
        QCOMPARE(view->stats()->max, expected->max);
        QCOMPARE(view->stats()->histogram, expected->histogram);
        const QString figures = view->figuresLabel()->text();
        for (double v : {expected->min, expected->max, expected->mean, expected->stddev})
            QVERIFY2(figures.contains(QString::number(v, 'g', 4)), qPrintable(figures));
        QCOMPARE(view->histogram()->chart()->series().size(), 1);
        QVERIFY(view->histogram()->isVisible());
        keepScreenshot(w.get(), "studio-initializer.png");
        // Another node: nothing inspected until a constant is clicked again.
        w->scene()->selectNode(NodeId(conv + 1));
        QVERIFY(!view->isVisible());
        QCOMPARE(view->value(), kNone);
    }

    // A module collapsed from a box's context menu is one box, colored by the
    // clusters inside it; expanded from its own menu, the graph is as before.
    void moduleCollapsesAndExpands()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        auto a = w->session()->analysis();
        const Graph& g = a->prepared->model.graph;
        const size_t items = w->scene()->displayItems().size(), edges = w->scene()->edgeItems().size();
        NodeId inside = kNone;
        for (const Node& n : g.nodes())
            if (QString::fromStdString(n.name).startsWith("/inception4a/")) {
                inside = n.id;
                break;
            }
        QVERIFY(inside != kNone);
        std::vector<NodeId> members;
        std::set<int> clusters;
        for (const Node& n : g.nodes())
            if (QString::fromStdString(n.name).startsWith("/inception4a/")) {
                members.push_back(n.id);
                clusters.insert(a->clusterOfNode[0][size_t(n.id)]);
            }
        QVERIFY(members.size() > 5);
        QVERIFY(clusters.size() > 1);  // the module's branches run on several workers

        std::unique_ptr<QMenu> menu(w->view()->contextMenuFor(w->scene()->itemOfNode(inside), w.get()));
        auto* collapse = menu->findChild<QMenu*>("collapseModule");
        QVERIFY(collapse);
        QAction* module = nullptr;
        for (QAction* action : collapse->actions())
            if (action->text() == "/inception4a/")
                module = action;
        QVERIFY(module);
        QSignalSpy laid(w->session(), &StudioSession::layoutChanged);
        module->trigger();
        QVERIFY(laid.wait(30000));
        QCOMPARE(w->session()->collapsedModules(), std::vector<std::string>{"/inception4a/"});
        QCOMPARE(w->scene()->displayItems().size(), items - members.size() + 1);
        QVERIFY(w->scene()->edgeItems().size() < edges);
        NodeItem* box = w->scene()->itemOfNode(inside);
        QVERIFY(box->isGroup());
        for (NodeId n : members)
            QCOMPARE(w->scene()->itemOfNode(n), box);
        // Colored by the clusters inside: a band each, the most frequent one as the fill.
        QCOMPARE(box->bands().size(), int(clusters.size()));
        QVERIFY(clusters.count(a->clusterOfNode[0][size_t(members.front())]) == 1);
        QSet<QRgb> bandColors;
        for (const auto& band : box->bands())
            bandColors.insert(band.first.rgb());
        for (int c : clusters)
            QVERIFY(bandColors.contains(clusterColor(c).rgb()));
        QCOMPARE(box->fill(), box->bands().front().first);
        QVERIFY(box->toolTip().contains("module /inception4a/"));
        QVERIFY(box->toolTip().contains(QString("%1 nodes").arg(members.size())));
        QCOMPARE(w->scene()->nameOf(box), QString("/inception4a/"));
        w->view()->centerOnNode(inside);
        keepScreenshot(w.get(), "studio-module-collapsed.png");

        // Expand from the box's own menu.
        menu.reset(w->view()->contextMenuFor(box, w.get()));
        QAction* expand = menu->findChild<QAction*>("expandModule");
        QVERIFY(expand);
        expand->trigger();
        QVERIFY(laid.wait(30000));
        QVERIFY(w->session()->collapsedModules().empty());
        QCOMPARE(w->scene()->displayItems().size(), items);
        QCOMPARE(w->scene()->edgeItems().size(), edges);
        verifyClusterColors(*w);

        // View > Collapse Modules > At Depth 1: every top-level module a box.
        action(*w, "At Depth 1")->trigger();
        QVERIFY(laid.wait(30000));
        const auto top = modulesAtDepth(g, 1);
        QCOMPARE(w->session()->layout()->display.groups.prefixes.size(), top.size());
        QVERIFY(w->scene()->displayItems().size() < items / 2);
        keepScreenshot(w.get(), "studio-modules.png");
        action(*w, "Expand All")->trigger();
        QVERIFY(laid.wait(30000));
        QCOMPARE(w->scene()->displayItems().size(), items);
    }

    // An action of the menus by its text, without the & of its shortcut.
    static QAction* action(MainWindow& w, const QString& text)
    {
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text().remove('&') == text)
                return a;
        return nullptr;
    }

    void runAndExportWithoutAModelSaySo_data()
    {
        QTest::addColumn<QString>("actionText");
        QTest::newRow("run") << "Run Serial and Parallel";
        QTest::newRow("export code") << "Code (Python or C++)...";
        QTest::newRow("export json") << "Metrics and schedule as JSON...";
        QTest::newRow("export svg") << "Graph as SVG...";
    }

    void runAndExportWithoutAModelSaySo()
    {
        QFETCH(QString, actionText);
        auto w = window();
        QAction* a = action(*w, actionText);
        QVERIFY2(a, qPrintable(actionText));
        a->trigger();
        auto* box = w->findChild<QMessageBox*>("noModelMessage");
        QVERIFY(box);
        QVERIFY2(box->text().contains("open an .onnx file first"), qPrintable(box->text()));
        QVERIFY(w->statusBar()->currentMessage().contains("open an .onnx file first"));
        QVERIFY(!w->runPanel()->running());
        box->close();
    }

    void dropOnTheCanvasOpensTheFile()
    {
        auto w = window();
        QWidget* canvas = w->view()->viewport();
        QVERIFY(canvas->acceptDrops());
        QMimeData data;
        data.setUrls({QUrl::fromLocalFile(test::sourcePath("resources/models/inception_sample.onnx"))});
        QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(canvas, &enter);
        QVERIFY(enter.isAccepted());
        QSignalSpy ready(w.get(), &MainWindow::modelReady);
        QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(canvas, &drop);
        QVERIFY(drop.isAccepted());
        QVERIFY(ready.wait(60000));
        QVERIFY(QString::fromStdString(w->session()->prepared()->path).endsWith("inception_sample.onnx"));
    }

    // A model with symbolic sizes: unknown figures say so until the sizes are set; then
    // everything is known, Run works, and the sizes come back with the model.
    void inputSizesMakeTheFiguresKnown()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("symbolic.onnx");
        {
            test::OnnxBuilder b;
            b.input("x", {-1, 3, -1, -1}, onnx::TensorProto::FLOAT, {"N", "", "H", "W"})
                .initializer("w1", {4, 3, 3, 3})
                .initializer("w2", {4, 3, 1, 1})
                .output("y", {-1, -1, -1, -1});
            test::OnnxBuilder::setInts(b.node("Conv", {"x", "w1"}, {"a"}, "conv3x3"), "pads", {1, 1, 1, 1});
            b.node("Conv", {"x", "w2"}, {"b"}, "conv1x1");
            b.node("Add", {"a", "b"}, {"y"}, "add");
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(b.bytes()));
        }
        auto w = window();
        QVERIFY(open(*w, path));
        QVERIFY(!w->session()->analysis()->metrics.costsComplete());
        QStringList values;
        for (const MetricRow& r : metricRows(*w->session()->analysis()))
            values << r.name + "=" + r.value;
        QVERIFY2(values.join(';').contains("Speedup (simulated)=unknown"), qPrintable(values.join(';')));
        QVERIFY2(values.join(';').contains("FLOPs=>= "), qPrintable(values.join(';')));
        QCOMPARE(w->session()->analysis()->metrics.unknownCosts, GraphMetrics::UnknownCosts::InputSizes);
        QVERIFY2(w->tuning()->statusLabel()->text().contains("until the input sizes are set (Input Sizes)"),
                 qPrintable(w->tuning()->statusLabel()->text()));
        QLineEdit* x = w->inputSizes()->sizesEdit("x");
        QVERIFY(x);
        QCOMPARE(x->text(), QString("Nx3xHxW"));

        // Run says what is missing and where to set it.
        QSignalSpy done(w->runPanel(), &RunPanel::finished);
        w->runPanel()->start();
        QVERIFY(done.wait(120000));
        QVERIFY(!done.first().first().toBool());
        QVERIFY2(done.first().at(1).toString().contains("Input Sizes"), qPrintable(done.first().at(1).toString()));

        // Not a list of sizes: said in the panel, the model stays.
        x->setText("1x3xfoo");
        w->inputSizes()->apply();
        QVERIFY2(w->inputSizes()->statusLabel()->text().contains("not a list of sizes"),
                 qPrintable(w->inputSizes()->statusLabel()->text()));

        QSignalSpy ready(w.get(), &MainWindow::modelReady);
        x->setText("1x3x32x32");
        w->inputSizes()->apply();
        QVERIFY(ready.wait(60000));
        QCOMPARE(w->session()->inputShapes(), std::vector<std::string>{"x=1,3,32,32"});
        QVERIFY(w->session()->analysis()->metrics.costsComplete());
        QCOMPARE(w->inputSizes()->sizesEdit("x")->text(), QString("1x3x32x32"));
        keepInputSizesScreenshots(*w, "studio-input-sizes");
        runsTwice(*w);
        w.reset();

        // Remembered for this model.
        MainWindow again;
        again.session()->setMachineFile(test::sourcePath("tests/data/machine.json"));
        QVERIFY(open(again, path));
        QCOMPARE(again.session()->inputShapes(), std::vector<std::string>{"x=1,3,32,32"});
        QVERIFY(again.session()->analysis()->metrics.costsComplete());
    }

    // Sizes that depend on the data (after NonZero), every input sized: the tuning status and
    // the Gantt chart say the nodes need measuring, not input sizes; a run's profile as the
    // costs gives every node one.
    void dataDependentSizesAskForAMeasurement()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("data_dependent.onnx");
        QVERIFY(test::writeModel(test::dataDependentSizesModel(), path.toStdString()));
        auto w = window();
        QVERIFY(open(*w, path));
        auto a = w->session()->analysis();
        QCOMPARE(a->metrics.unknownCosts, GraphMetrics::UnknownCosts::DataDependent);
        const QString status = w->tuning()->statusLabel()->text();
        QVERIFY2(status.contains("depending on the data (e.g. nonzero)") && status.contains("Use as measured costs") &&
                     !status.contains("input sizes"),
                 qPrintable(status));
        QVERIFY2(w->gantt()->caption().contains("until measured"), qPrintable(w->gantt()->caption()));

        runsTwice(*w);
        w->runPanel()->useProfile();
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->costs.measured, 30000);
        QVERIFY(w->session()->analysis()->metrics.costsComplete());
        QVERIFY2(w->tuning()->statusLabel()->text().contains("simulated speedup"),
                 qPrintable(w->tuning()->statusLabel()->text()));
    }

    // An input's data from a NumPy file (Data... in Input Sizes): its sizes fill the row, Apply
    // reads the model so, and Run's timing workers read the file (one of the wrong size would
    // stop them); a file that is not .npy is said in the panel; As in the File drops it.
    void inputDataFromAFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("open_sizes.onnx");
        {
            test::OnnxBuilder b;
            b.input("x", {-1, 3, -1, -1}, onnx::TensorProto::FLOAT, {"N", "", "H", "W"})
                .initializer("w", {4, 3, 3, 3})
                .output("y", {-1, -1, -1, -1});
            test::OnnxBuilder::setInts(b.node("Conv", {"x", "w"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
            QVERIFY(test::writeModel(b, path.toStdString()));
        }
        Tensor image;
        image.dtype = DataType::Float;
        image.dims = {1, 3, 24, 20};
        image.data.assign(size_t(image.numel()) * 4, '\0');
        const QString npy = dir.filePath("image.npy");
        writeNpy(npy.toStdString(), image);
        auto w = window();
        QVERIFY(open(*w, path));
        InputSizesPanel* panel = w->inputSizes();
        QVERIFY(!panel->setInputFile("x", path));  // the model itself: not a .npy file
        QVERIFY2(panel->statusLabel()->text().contains("not a NumPy .npy file"), qPrintable(panel->statusLabel()->text()));
        QVERIFY(panel->setInputFile("x", npy));
        QCOMPARE(panel->sizesEdit("x")->text(), QString("1x3x24x20"));
        QCOMPARE(panel->dataButton("x")->text(), QString("image.npy"));
        QSignalSpy ready(w.get(), &MainWindow::modelReady);
        panel->apply();
        QVERIFY(ready.wait(60000));
        QCOMPARE(w->session()->inputFiles(), std::vector<std::string>{"x=" + npy.toStdString()});
        QCOMPARE(w->session()->inputShapes(), std::vector<std::string>{"x=1,3,24,20"});
        QCOMPARE(w->session()->timingRequest(*w->session()->analysis()).prepare.inputs, w->session()->inputFiles());
        QVERIFY(w->session()->analysis()->metrics.costsComplete());
        QCOMPARE(w->inputSizes()->dataButton("x")->text(), QString("image.npy"));  // shown again after reading
        QVERIFY2(w->inputSizes()->statusLabel()->text().contains("read x from image.npy"),
                 qPrintable(w->inputSizes()->statusLabel()->text()));
        keepInputSizesScreenshots(*w, "studio-input-data");
        runsTwice(*w);

        // Remembered for this model with its sizes; a file since gone is dropped, and said so.
        {
            auto next = window();
            QVERIFY(open(*next, path));
            QCOMPARE(next->session()->inputFiles(), std::vector<std::string>{"x=" + npy.toStdString()});
            QCOMPARE(next->inputSizes()->dataButton("x")->text(), QString("image.npy"));
        }
        QVERIFY(QFile::rename(npy, npy + ".moved"));
        {
            auto next = window();
            QVERIFY(open(*next, path));
            QVERIFY(next->session()->inputFiles().empty());
            const QString note = next->statusBar()->currentMessage();
            QVERIFY2(note.contains("Random data instead of") && note.contains(npy), qPrintable(note));
        }
        QVERIFY(QFile::rename(npy + ".moved", npy));

        QSignalSpy again(w.get(), &MainWindow::modelReady);
        w->inputSizes()->reset();
        QVERIFY(again.wait(60000));
        QVERIFY(w->session()->inputFiles().empty());
        QCOMPARE(w->inputSizes()->dataButton("x")->text(), QString("Data..."));
        auto next = window();  // and forgotten
        QVERIFY(open(*next, path));
        QVERIFY(next->session()->inputFiles().empty());
    }

    // A symbolic batch alone needs no sizes: read as one sample, the panel says so.
    void symbolicBatchIsOneSample()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("dynamic_batch.onnx");
        QVERIFY(test::writeModel(test::symbolicBatchConvModel(), path.toStdString()));
        auto w = window();
        QVERIFY(open(*w, path));
        QVERIFY(w->session()->analysis()->metrics.costsComplete());
        QCOMPARE(w->inputSizes()->sizesEdit("x")->text(), QString("1x3x16x16"));
        const QString status = w->inputSizes()->statusLabel()->text();
        QVERIFY2(status.contains("batch of x symbolic: read as one sample"), qPrintable(status));
        w->findChild<QDockWidget*>("inputSizes")->raise();
        keepScreenshot(w.get(), "studio-input-sizes-batch.png");

        // A name from the file is shown as text, never read as markup.
        const QString marked = dir.filePath("marked_batch.onnx");
        QVERIFY(test::writeModel(test::symbolicBatchConvModel("<b>x</b>"), marked.toStdString()));
        QVERIFY(open(*w, marked));
        const QString escaped = w->inputSizes()->statusLabel()->text();
        QVERIFY2(escaped.contains("batch of &lt;b&gt;x&lt;/b&gt; symbolic"), qPrintable(escaped));
    }

    void settingsAreRestoredAfterARestart()
    {
        {
            auto w = window();
            PlanSettings s = w->session()->settings();
            s.algorithm = "heft";
            s.workers = 3;
            s.batch = 4;
            s.degree = 2;
            s.clone = false;
            w->session()->setSettings(s);
            action(*w, "Operator Type")->trigger();
            action(*w, "Left to Right")->setChecked(true);
        }
        MainWindow again;  // as after a restart: nothing cleared
        const PlanSettings& s = again.session()->settings();
        QCOMPARE(s.algorithm, std::string("heft"));
        QCOMPARE(s.workers, 3);
        QCOMPARE(s.batch, 4);
        QCOMPARE(s.degree, 2);
        QVERIFY(!s.clone);
        QCOMPARE(again.scene()->colorMode(), ColorMode::OpType);
        QVERIFY(action(again, "Operator Type")->isChecked());
        QVERIFY(again.session()->leftToRight());
        QVERIFY(action(again, "Left to Right")->isChecked());
        QCOMPARE(again.tuning()->algorithmBox()->currentData().toString(), QString("heft"));
        QCOMPARE(again.tuning()->workersBox()->value(), 3);
    }

    void teachingFollowsTheClusteringOrder()
    {
        auto w = window();
        QVERIFY(open(*w, test::modelPath("googlenet")));
        TeachingPanel* t = w->teaching();
        t->start();  // the steps are computed off the UI thread
        QTRY_VERIFY_WITH_TIMEOUT(t->stepCount() > 0, 30000);
        auto a = w->session()->analysis();
        const auto expected = linearClusters(*a->costs.table, 1);
        QCOMPARE(t->paths(), expected);
        MergeReport report;
        clusterOneCopy(*a->costs.table, 1, a->problem.workers, &report);
        QCOMPARE(t->merges(), report.steps);
        QCOMPARE(int(report.steps.size()), int(expected.size()) - int(a->plan.schedule.clusters.size()));
        QCOMPARE(t->stepCount(), int(expected.size() + report.steps.size()) + 1);
        QCOMPARE(t->step(), 0);
        for (int step = 0; step < 3; ++step) {
            if (step > 0)
                t->next();
            QCOMPARE(t->step(), step);
            for (int k = 0; k <= step; ++k)
                for (NodeId n : expected[size_t(k)])
                    QCOMPARE(w->scene()->itemOfNode(n)->fill(), clusterColor(k));
            for (NodeId n : expected[size_t(step)])
                QVERIFY(w->scene()->itemOfNode(n)->critical());
        }
        keepScreenshot(w.get(), "studio-teaching.png");
        t->previous();
        QCOMPARE(t->step(), 1);
        // The merges, one at a time: linear cluster k is drawn in the color of
        // the cluster its group merged into; each step leaves one group fewer.
        std::vector<int> head(expected.size());
        for (size_t k = 0; k < head.size(); ++k)
            head[k] = int(k);
        for (size_t j = 0; j < report.steps.size(); ++j) {
            for (int& h : head)
                if (h == report.steps[j].first)
                    h = report.steps[j].second;
            t->showStep(int(expected.size() + j));
            QCOMPARE(std::set<int>(head.begin(), head.end()).size(), expected.size() - j - 1);
            for (size_t k = 0; k < expected.size(); ++k)
                for (NodeId n : expected[k])
                    QCOMPARE(w->scene()->itemOfNode(n)->fill(), clusterColor(head[k]));
            if (j == report.steps.size() / 2)
                keepScreenshot(w.get(), "studio-teaching-merge.png");
        }
        t->showStep(t->stepCount() - 1);  // the schedule as planned
        verifyClusterColors(*w);
        QVERIFY(t->description()->text().contains("merged"));
        t->exit();
        QVERIFY(!w->scene()->teachingOverlay());
        verifyClusterColors(*w);
    }

    // Each step of the teaching: the view goes to the step's nodes, and the
    // Gantt and the cluster loads show the clustering at that step.
    void teachingMovesTheViewAndTheCharts_data()
    {
        QTest::addColumn<QString>("which");
        QTest::newRow("the critical path") << "first path";
        QTest::newRow("a later path") << "later path";
        QTest::newRow("a merge") << "merge";
    }
    void teachingMovesTheViewAndTheCharts()
    {
        QFETCH(QString, which);
        auto w = window();
        PlanSettings settings = w->session()->settings();
        settings.workers = 2;
        w->session()->setSettings(settings);
        QVERIFY(open(*w, test::modelPath("googlenet")));
        TeachingPanel* t = w->teaching();
        t->start();
        QTRY_VERIFY_WITH_TIMEOUT(t->stepCount() > 0, 30000);
        const auto analysis = w->session()->analysis();
        const int peeled = int(t->paths().size());
        const int merged = int(t->merges().size());
        QVERIFY(merged > 1 && peeled > 2);
        const int step = which == "first path" ? 0 : which == "later path" ? peeled / 2 : peeled + merged / 2;
        // Look elsewhere first: the graph's last box, at 100 %.
        w->view()->setZoom(1.0);
        w->view()->centerOn(w->scene()->displayItems().back());
        const QPointF before = w->view()->mapToScene(w->view()->viewport()->rect().center());
        t->showStep(step);
        QCOMPARE(t->step(), step);

        // The charts: the step's clustering, simulated.
        const auto plan = t->stepPlan();
        QVERIFY(plan);
        QVERIFY(plan != analysis);
        QVERIFY(plan->plan.validation.valid);
        QCOMPARE(w->gantt()->analysis(), plan);
        QCOMPARE(w->loadsChart()->analysis(), plan);
        QVERIFY2(w->gantt()->caption().startsWith(QString("step %1 of %2").arg(step + 1).arg(t->stepCount())),
                 qPrintable(w->gantt()->caption()));
        const pipeline::TeachingState state =
            pipeline::teachingState(*analysis, pipeline::teachingSteps(*analysis), step);
        QCOMPARE(t->stepColors(), state.clusterColors);
        QCOMPARE(t->stepNodes(), state.current);
        const size_t clusters = plan->plan.schedule.clusters.size();
        if (step < peeled) {
            // The paths peeled so far, and one row for the nodes not yet clustered.
            QCOMPARE(clusters, size_t(step + 2));
            QCOMPARE(t->stepColors().back(), -1);
            QCOMPARE(w->loadsChart()->categories().last(), QString("rest"));
            QVERIFY(legendTexts(*w->scene()).contains("not clustered yet"));
        } else {
            QCOMPARE(clusters, size_t(peeled - (step - peeled) - 1));
            QVERIFY(std::is_sorted(t->stepColors().begin(), t->stepColors().end()));
            QVERIFY(!legendTexts(*w->scene()).contains("not clustered yet"));  // every node is by now
        }
        QCOMPARE(w->loadsChart()->barCount(), int(clusters));
        // Every node's row in the Gantt has the color the node is drawn in.
        for (const Node& n : analysis->prepared->model.graph.nodes())
            QCOMPARE(w->gantt()->rowColor(plan->plan.schedule.owner[size_t(n.id)]),
                     w->scene()->itemOfNode(n.id)->fill());
        double load = 0;
        for (double l : plan->loads)
            load += l;
        QVERIFY(std::abs(load - plan->plan.simulation.serial) <= 1e-9 + 1e-6 * load);

        // The view: moved, with the step's first box (in layout order) on screen.
        QVERIFY(!t->stepNodes().empty());
        QRectF first;
        for (NodeId n : t->stepNodes()) {
            const QRectF r = w->scene()->itemOfNode(n)->sceneBoundingRect();
            if (first.isNull() || r.top() < first.top())
                first = r;
        }
        const QRectF visible = w->view()->mapToScene(w->view()->viewport()->rect()).boundingRect();
        QVERIFY2(visible.contains(first), qPrintable(QString("step %1").arg(step)));
        QVERIFY(w->view()->mapToScene(w->view()->viewport()->rect().center()) != before);
        if (which == "later path") {
            keepScreenshot(w.get(), "studio-teaching-step.png");
            action(*w, "Dark Theme")->setChecked(true);
            keepScreenshot(w.get(), "studio-teaching-step-dark.png");
            QCOMPARE(w->gantt()->rowColor(int(clusters) - 1), sceneTheme(true).unclustered);
            action(*w, "Dark Theme")->setChecked(false);
        }

        // The last step is the plan; leaving shows the plan again.
        t->showStep(t->stepCount() - 1);
        QCOMPARE(w->gantt()->analysis(), analysis);
        t->showStep(step);
        t->exit();
        QVERIFY(!t->stepPlan());
        QCOMPARE(w->gantt()->analysis(), analysis);
        QCOMPARE(w->loadsChart()->analysis(), analysis);
        QCOMPARE(w->gantt()->rowColor(0), clusterColor(0));
    }

    // The bundled sample shows what Ramiel does: at P = 2 its branches split
    // evenly and the plan gains clearly; batch 4 with hyperclustering gains more.
    void sampleGainsInParallel()
    {
        auto w = window();
        PlanSettings s = w->session()->settings();
        s.algorithm = "linear";
        s.workers = 2;
        s.batch = 1;
        s.degree = 1;
        w->session()->setSettings(s);
        QVERIFY(open(*w, test::sourcePath("resources/models/inception_sample.onnx")));
        const auto one = w->session()->analysis();
        QCOMPARE(one->plan.schedule.clusters.size(), size_t(2));
        QVERIFY2(one->plan.simulation.speedup > 1.3, qPrintable(QString::number(one->plan.simulation.speedup)));
        // Balanced branches: within 25 % (the stem, the joins and the head share one worker).
        const auto [lightest, heaviest] = std::minmax_element(one->loads.begin(), one->loads.end());
        QVERIFY2(*lightest > 0.75 * *heaviest, qPrintable(QString("%1 vs %2").arg(*lightest).arg(*heaviest)));
        // Teaching on it, mid-way through the peeling: one branch per step.
        TeachingPanel* t = w->teaching();
        t->start();
        QTRY_VERIFY_WITH_TIMEOUT(t->stepCount() > 0, 30000);
        QVERIFY(t->paths().size() >= 7);  // the critical path (a branch of each block), then the other branches
        t->showStep(4);
        w->findChild<QDockWidget*>("teaching")->raise();
        keepScreenshot(w.get(), "studio-teaching-sample.png");
        action(*w, "Dark Theme")->setChecked(true);
        keepScreenshot(w.get(), "studio-teaching-sample-dark.png");
        action(*w, "Dark Theme")->setChecked(false);
        t->exit();
        s.batch = 4;
        s.degree = 2;
        w->session()->setSettings(s);
        QTRY_VERIFY_WITH_TIMEOUT(w->session()->analysis()->settings == s, 30000);
        const auto four = w->session()->analysis();
        QVERIFY2(four->plan.simulation.speedup > one->plan.simulation.speedup,
                 qPrintable(QString("%1 vs %2").arg(four->plan.simulation.speedup).arg(one->plan.simulation.speedup)));
    }

    // If/Loop/Scan bodies open from the menu or a double-click, are drawn
    // without a schedule, and Back returns to the model's graph.
    void bodyOpensAndCloses_data()
    {
        QTest::addColumn<QString>("branch");
        QTest::addColumn<bool>("doubleClick");
        QTest::addColumn<int>("nodes");
        QTest::newRow("then_branch from the menu") << "then_branch" << false << 3;
        QTest::newRow("else_branch from the menu") << "else_branch" << false << 2;
        QTest::newRow("a double-click opens the first") << "then_branch" << true << 3;
    }
    void bodyOpensAndCloses()
    {
        QFETCH(QString, branch);
        QFETCH(bool, doubleClick);
        QFETCH(int, nodes);
        QTemporaryDir dir;
        auto w = window();
        QVERIFY(open(*w, writeIfModel(dir.path())));
        const Graph& graph = w->session()->prepared()->model.graph;
        NodeId iff = kNone, relu = kNone;
        for (const Node& n : graph.nodes())
            (n.opType == "If" ? iff : relu) = n.id;
        QVERIFY(iff != kNone && relu != kNone);
        QCOMPARE(w->bodyDepth(), 0);
        QVERIFY(!w->bodyBar()->isVisible());
        w->scene()->selectNode(relu);
        QCOMPARE(w->properties()->node(), relu);

        // The If's menu offers each body; another node's offers none.
        std::unique_ptr<QMenu> menu(w->view()->contextMenuFor(w->scene()->itemOfNode(iff), w.get()));
        QStringList offered;
        QAction* chosen = nullptr;
        for (QAction* a : menu->actions())
            if (a->objectName() == "openBody") {
                offered << a->text();
                if (a->text().contains(branch))
                    chosen = a;
            }
        QCOMPARE(offered, QStringList({"Open Body 'then_branch'", "Open Body 'else_branch'"}));
        std::unique_ptr<QMenu> plain(w->view()->contextMenuFor(w->scene()->itemOfNode(relu), w.get()));
        for (QAction* a : plain->actions())
            QVERIFY(a->objectName() != "openBody");

        if (doubleClick) {
            w->view()->centerOnNode(iff);
            const QPoint at = w->view()->mapFromScene(w->scene()->itemOfNode(iff)->sceneBoundingRect().center());
            QTest::mouseDClick(w->view()->viewport(), Qt::LeftButton, {}, at);
        } else {
            chosen->trigger();
        }
        QCOMPARE(w->bodyDepth(), 1);
        const Graph* shown = w->scene()->graph();
        QVERIFY(shown && shown != &graph);
        QCOMPARE(int(shown->nodeCount()), nodes);
        QCOMPARE(QString::fromStdString(shown->name), branch);
        QVERIFY(w->bodyBar()->isVisible());
        QVERIFY2(w->bodyPath()->text().contains("If 'the_if'") && w->bodyPath()->text().contains(branch),
                 qPrintable(w->bodyPath()->text()));
        // Every node drawn, in no cluster's color; the legend says why.
        QVERIFY(!w->scene()->analysis());
        for (const Node& n : shown->nodes()) {
            QVERIFY(w->scene()->itemOfNode(n.id));
            QCOMPARE(w->scene()->itemOfNode(n.id)->fill(), w->scene()->theme().unknownFill);
        }
        QVERIFY2(legendTexts(*w->scene()).join('|').contains("not scheduled"),
                 qPrintable(legendTexts(*w->scene()).join('|')));
        // The value read from the enclosing graph is drawn as an input feeding the body.
        const DisplayGraph& d = w->scene()->layout()->display;
        int outer = -1;
        for (size_t i = 0; i < d.items.size(); ++i)
            if (d.items[i].kind == DisplayItem::Kind::Input && d.items[i].title == "r")
                outer = int(i);
        QVERIFY(outer >= 0);
        QVERIFY(std::any_of(d.edges.begin(), d.edges.end(), [&](const DisplayEdge& e) { return e.from == outer; }));
        // Selecting a body's node does not show the model's node of that id.
        w->scene()->selectNode(0);
        QCOMPARE(w->properties()->node(), kNone);
        if (QTest::currentDataTag() == QString("then_branch from the menu")) {
            w->scene()->clearSelection();
            action(*w, "Operator Type")->trigger();
            keepScreenshot(w.get(), "studio-body.png");
            action(*w, "Dark Theme")->setChecked(true);
            keepScreenshot(w.get(), "studio-body-dark.png");
            action(*w, "Dark Theme")->setChecked(false);
            action(*w, "Cluster")->trigger();
        }

        // Back: the model's graph with its schedule colors.
        w->bodyBar()->findChild<QPushButton*>("bodyBack")->click();
        QCOMPARE(w->bodyDepth(), 0);
        QVERIFY(!w->bodyBar()->isVisible());
        QVERIFY(w->scene()->graph() == &w->session()->prepared()->model.graph);
        QVERIFY(!legendTexts(*w->scene()).join('|').contains("not scheduled"));
        verifyClusterColors(*w);
        w->scene()->selectNode(iff);
        QCOMPARE(w->properties()->node(), iff);
    }

    // A body inside a body: the bar shows both levels; Back goes up one at a time.
    void nestedBodiesGoBackOneLevelAtATime()
    {
        QTemporaryDir dir;
        auto w = window();
        QVERIFY(open(*w, writeIfModel(dir.path())));
        auto findIf = [](const Graph& g) {
            for (const Node& n : g.nodes())
                if (n.opType == "If")
                    return n.id;
            return NodeId(kNone);
        };
        const NodeId outer = findIf(w->session()->prepared()->model.graph);
        w->openBody(outer, "else_branch", 0);
        QCOMPARE(w->bodyDepth(), 1);
        const NodeId inner = findIf(*w->scene()->graph());
        QVERIFY(inner != kNone);
        w->openBody(inner, "then_branch", 0);
        QCOMPARE(w->bodyDepth(), 2);
        QCOMPARE(w->scene()->graph()->name, std::string("else_branch_inner_then"));
        QCOMPARE(int(w->scene()->graph()->nodeCount()), 1);
        const QString path = w->bodyPath()->text();
        QVERIFY2(path.contains("If 'the_if'") && path.contains("If 'else_branch/If'") &&
                     path.indexOf("else_branch") < path.lastIndexOf("then_branch"),
                 qPrintable(path));
        QPushButton* back = w->bodyBar()->findChild<QPushButton*>("bodyBack");
        back->click();
        QCOMPARE(w->bodyDepth(), 1);
        QCOMPARE(w->scene()->graph()->name, std::string("else_branch"));
        QVERIFY(!w->bodyPath()->text().contains("inner"));
        back->click();
        QCOMPARE(w->bodyDepth(), 0);
        QVERIFY(w->scene()->graph() == &w->session()->prepared()->model.graph);
        // A body that is not there opens nothing.
        w->openBody(outer, "no_such_branch", 0);
        QCOMPARE(w->bodyDepth(), 0);
    }
};

QTEST_MAIN(TestStudio)
#include "tst_studio.moc"
