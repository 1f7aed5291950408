// Ramiel Studio's responsiveness, measured through the real MainWindow
// (offscreen unless a display is given):
//   open -> drawn graph, per model (targets: googlenet < 2 s, inception_v3 < 3 s, densenet121 < 5 s)
//   re-schedule after changing d on inception_v3, B = 4 (target < 300 ms)
//   the longest UI-thread stall while opening densenet121 (target < 100 ms)
// Usage: bench_studio MODELS_DIR [--machine FILE] [--repeat N] [--no-passes]
#include "app/studio/main_window.h"
#include "views/graph_view.h"
#include "views/studio_session.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace ramiel::studio;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Runs the event loop until `signal` fires (true) or `ms` pass (false).
template <typename Sender, typename Signal>
bool waitFor(Sender* sender, Signal signal, int ms)
{
    QEventLoop loop;
    bool fired = false;
    auto c = QObject::connect(sender, signal, &loop, [&] {
        fired = true;
        loop.quit();
    });
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
    QObject::disconnect(c);
    return fired;
}

// Opens a model and returns seconds until the graph is drawn; `stall` gets
// the longest gap between UI-thread timer ticks meanwhile.
double openAndDraw(MainWindow& w, const QString& path, double* stall)
{
    QElapsedTimer clock, tick;
    double longest = 0;
    QTimer probe;
    probe.setInterval(2);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        longest = std::max(longest, double(tick.nsecsElapsed()) * 1e-9);
        tick.restart();
    });
    bool ok = false;
    QString error;
    auto c = QObject::connect(&w, &MainWindow::modelReady, [&](bool result) { ok = result; });
    auto f = QObject::connect(w.session(), &StudioSession::failed,
                              [&](const QString&, const QString& message) { error = message; });
    clock.start();
    tick.start();
    probe.start();
    w.openFile(path);
    const bool fired = waitFor(&w, &MainWindow::modelReady, 120000);
    QObject::disconnect(c);
    QObject::disconnect(f);
    if (!fired || !ok) {
        std::fprintf(stderr, "bench_studio: could not open %s: %s\n", qPrintable(path), qPrintable(error));
        std::exit(1);
    }
    w.view()->viewport()->repaint();  // the first frame of the new graph
    const double seconds = double(clock.nsecsElapsed()) * 1e-9;
    QApplication::processEvents();
    probe.stop();
    longest = std::max(longest, double(tick.nsecsElapsed()) * 1e-9);
    if (stall)
        *stall = longest;
    return seconds;
}

}  // namespace

int main(int argc, char** argv)
{
    if (!qEnvironmentVariableIsSet("DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName("RamielBench");
    QCommandLineParser parser;
    parser.addPositionalArgument("models", "Folder with googlenet.onnx, inception_v3.onnx, densenet121.onnx");
    const QCommandLineOption machine("machine", "Machine constants JSON", "file");
    const QCommandLineOption repeat("repeat", "Repetitions (median reported)", "n", "3");
    const QCommandLineOption noPasses("no-passes", "Show the graphs as in the files (no graph passes)");
    parser.addOption(noPasses);
    parser.addOption(machine);
    parser.addOption(repeat);
    parser.addHelpOption();
    parser.process(app);
    if (parser.positionalArguments().isEmpty())
        parser.showHelp(2);
    const QDir models(parser.positionalArguments().first());
    const int n = std::max(1, parser.value(repeat).toInt());
    qputenv("RAMIEL_STUDIO_NO_DIALOGS", "1");

    MainWindow w;
    if (parser.isSet(machine))
        w.session()->setMachineFile(parser.value(machine));
    if (parser.isSet(noPasses))
        w.session()->setPasses({});
    w.resize(1440, 900);
    w.show();

    std::printf("Ramiel Studio responsiveness (median of %d; %s platform; %s)\n", n,
                qPrintable(QApplication::platformName()),
                parser.isSet(noPasses) ? "no graph passes" : "default graph passes");
    std::printf("%-14s %8s %10s %12s %14s\n", "model", "nodes", "open->drawn", "target", "max UI stall");
    const std::pair<const char*, double> targets[] = {{"googlenet", 2}, {"inception_v3", 3}, {"densenet121", 5}};
    for (const auto& [name, target] : targets) {
        std::vector<double> times, stalls;
        for (int r = 0; r < n; ++r) {
            double stall = 0;
            times.push_back(openAndDraw(w, models.filePath(QString(name) + ".onnx"), &stall));
            stalls.push_back(stall);
        }
        std::printf("%-14s %8zu %9.3f s %10.0f s %11.1f ms\n", name, w.session()->prepared()->model.graph.nodeCount(),
                    median(times), target, median(stalls) * 1e3);
    }

    // Re-schedule on inception_v3 at B = 4 when d changes: request -> recolored scene.
    openAndDraw(w, models.filePath("inception_v3.onnx"), nullptr);
    PlanSettings s = w.session()->settings();
    s.batch = 4;
    std::vector<double> replans;
    for (int r = 0; r < n; ++r)
        for (int d : {2, 4, 1}) {
            s.degree = d;
            QElapsedTimer clock;
            clock.start();
            QTimer::singleShot(0, w.session(), [&w, s] { w.session()->setSettings(s); });
            waitFor(w.session(), &StudioSession::analysisChanged, 30000);
            w.view()->viewport()->repaint();
            replans.push_back(double(clock.nsecsElapsed()) * 1e-9);
        }
    std::printf("re-schedule inception_v3 (B=4, d in 1,2,4, P=%d): median %.1f ms, max %.1f ms (target < 300 ms)\n",
                s.workers, median(replans) * 1e3, *std::max_element(replans.begin(), replans.end()) * 1e3);
    return 0;
}
