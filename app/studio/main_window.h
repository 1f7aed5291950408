// Ramiel Studio's main window: menus, docks and the status bar around the
// views; every algorithm runs in the core, off the UI thread.
#pragma once

#include <QMainWindow>
#include <QStringList>

#include <memory>
#include <vector>

namespace ramiel::pipeline {
struct PreparedModel;
struct RunConfig;
}

class QAction;
class QActionGroup;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace ramiel::studio {

class CompareView;
class FindBar;
class GanttChart;
class GraphScene;
class GraphView;
class LoadsChart;
class MetricsPanel;
class PropertiesPanel;
class RunPanel;
class StudioSession;
class TeachingPanel;
class InputSizesPanel;
class TuningPanel;
class TunePanel;
struct GraphLayout;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    StudioSession* session() const { return session_; }
    GraphScene* scene() const { return scene_; }
    GraphView* view() const { return view_; }
    TuningPanel* tuning() const { return tuning_; }
    MetricsPanel* metrics() const { return metrics_; }
    PropertiesPanel* properties() const { return properties_; }
    FindBar* findBar() const { return findBar_; }
    RunPanel* runPanel() const { return run_; }
    TunePanel* tunePanel() const { return tune_; }
    CompareView* compareView() const { return compare_; }
    TeachingPanel* teaching() const { return teaching_; }
    InputSizesPanel* inputSizes() const { return inputSizes_; }
    LoadsChart* loadsChart() const { return loads_; }
    GanttChart* gantt() const { return gantt_; }
    QTabWidget* centralTabs() const { return tabs_; }
    // Subgraphs opened (If/Loop/Scan bodies), innermost last; 0: the model's graph is shown.
    int bodyDepth() const { return int(bodies_.size()); }
    // The bar above the graph while a body is shown: where it is, and Back.
    QWidget* bodyBar() const { return bodyBar_; }
    QLabel* bodyPath() const { return bodyPath_; }

public Q_SLOTS:
    void openFile(const QString& path);
    // Opens a model with a run configuration applied (--config FILE from 'ramiel tune -o').
    void openWithConfig(const QString& path, const pipeline::RunConfig& config);
    // Raises the Tune panel and starts the search (unless a run is going).
    void startTune();
    void showOpenDialog();
    void exportGraphImage(const QString& path);  // .svg or .png, by suffix; errors in a dialog
    void exportJson(const QString& path);
    // The dark or the light palette for this run, without changing the stored choice.
    void setDarkTheme(bool dark);
    // Draws a subgraph of `node` of the graph shown (attribute `attribute`,
    // graph `index` in it) in the graph view, without a schedule.
    void openBody(int node, const QString& attribute, int index);
    // Back to the graph the shown body was opened from.
    void closeBody();

Q_SIGNALS:
    // After a model (or a failure) finished loading: for scripting and tests.
    void modelReady(bool ok);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void updateRecentMenu();
    void addRecent(const QString& path);
    void onModelChanged();
    void onAnalysisChanged();
    void onBusy(bool busy, const QString& stage);
    void showError(const QString& path, const QString& message);
    // True when a model is open; else says so (status bar and a message) naming `what`.
    bool requireModel(const QString& what);
    // Stores the open model's input sizes and data files (QSettings, by the model's path).
    void rememberInputs();
    void applyTheme(bool dark);
    void showAbout();
    void exportImageDialog(const QString& suffix);
    void exportJsonDialog();
    void exportCodeDialog();
    // Draws the innermost body opened, or the model's graph when none.
    void showGraphLevel();
    void closeAllBodies();

    struct Body {
        QString crumb;  // "If 'name' > then_branch"
        QString note;   // the legend's lines
        std::shared_ptr<const pipeline::PreparedModel> prepared;
        std::shared_ptr<const GraphLayout> layout;
    };

    StudioSession* session_;
    GraphScene* scene_;
    GraphView* view_;
    FindBar* findBar_;
    QTabWidget* tabs_;
    TuningPanel* tuning_;
    MetricsPanel* metrics_;
    PropertiesPanel* properties_;
    LoadsChart* loads_;
    GanttChart* gantt_;
    RunPanel* run_;
    TunePanel* tune_;
    CompareView* compare_;
    TeachingPanel* teaching_;
    InputSizesPanel* inputSizes_;
    QWidget* bodyBar_;
    QLabel* bodyPath_;
    std::vector<Body> bodies_;
    QMenu* recentMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    QAction* darkAction_ = nullptr;
    QLabel* modelLabel_;
    QLabel* zoomLabel_;
    QProgressBar* progress_;
    QPushButton* cancel_;
    QString currentPath_;
    QString pendingPath_;
    QString openNote_;  // shown once the model opened: remembered input files that could not be read
};

}  // namespace ramiel::studio
