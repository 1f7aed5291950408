// ramiel-studio: opens a model (the bundled sample on first start) in the main window.
#include "main_window.h"

#include "views/studio_session.h"

#include "core/pipeline/run_config.h"
#include "core/util/huge_pages.h"
#include "core/util/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QScreen>
#include <QSettings>
#include <QTimer>

#include <cstdio>
#include <optional>

namespace {

QString bundledSample()
{
    const QString installed =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral(RAMIEL_INSTALLED_SAMPLE));
    if (QFileInfo::exists(installed))
        return QDir::cleanPath(installed);
    return QStringLiteral(RAMIEL_SAMPLE_MODEL);
}

}  // namespace

int main(int argc, char** argv)
{
    // Models run in this process too (Run, Profile): huge pages for the heap, as the CLI has.
    ramiel::restartWithHugePages(argv);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Ramiel"));
    QApplication::setApplicationName(QStringLiteral("Ramiel Studio"));
    QApplication::setApplicationVersion(QString::fromLatin1(ramiel::kVersion));
    // The installed launcher and icon (packaging/): window managers match the window to them.
    QApplication::setDesktopFileName(QStringLiteral("ramiel-studio"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("ramiel-studio")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Ramiel Studio: see and exploit the task parallelism of ONNX models."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("The .onnx file to open"), QStringLiteral("[model]"));
    const QCommandLineOption machine(QStringLiteral("machine"),
                                     QStringLiteral("Machine constants for the cost model (JSON from 'ramiel calibrate -o')"),
                                     QStringLiteral("file"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save a screenshot of the window once the model is shown, then quit"),
                                        QStringLiteral("png"));
    const QCommandLineOption workers(QStringLiteral("workers"), QStringLiteral("Workers P to schedule for"),
                                     QStringLiteral("P"));
    const QCommandLineOption theme(QStringLiteral("theme"),
                                   QStringLiteral("light or dark, for this run (View > Dark Theme is kept as it was)"),
                                   QStringLiteral("theme"));
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("Open the model with a run configuration applied (from 'ramiel tune -o'); "
                                                   "the model is the file's unless one is given"),
                                    QStringLiteral("file"));
    parser.addOption(machine);
    parser.addOption(theme);
    parser.addOption(config);
    parser.addOption(screenshot);
    parser.addOption(workers);
    parser.process(app);

    // The configuration first: a bad file ends here, before a window opens.
    std::optional<ramiel::pipeline::RunConfig> runConfig;
    QString model = parser.positionalArguments().value(0);
    if (parser.isSet(config)) {
        try {
            runConfig = ramiel::pipeline::readRunConfig(parser.value(config).toStdString());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ramiel-studio: %s\n", e.what());
            return 2;
        }
        // Its model as written (relative to here), else beside the file.
        if (model.isEmpty()) {
            model = QString::fromStdString(runConfig->model);
            const QString beside = QFileInfo(parser.value(config)).dir().filePath(QFileInfo(model).fileName());
            if (!QFileInfo::exists(model) && QFileInfo::exists(beside))
                model = beside;
        }
    }

    ramiel::studio::MainWindow window;
    if (parser.isSet(theme)) {
        const QString t = parser.value(theme);
        if (t != QStringLiteral("light") && t != QStringLiteral("dark")) {
            std::fprintf(stderr, "ramiel-studio: --theme is light or dark, not '%s'\n", t.toLocal8Bit().constData());
            return 2;
        }
        window.setDarkTheme(t == QStringLiteral("dark"));
    }
    if (parser.isSet(machine))
        window.session()->setMachineFile(parser.value(machine));
    if (parser.isSet(workers)) {
        ramiel::studio::PlanSettings s = window.session()->settings();
        s.workers = std::max(1, parser.value(workers).toInt());
        window.session()->setSettings(s);
    }
    window.show();

    QSettings settings;
    if (model.isEmpty() && !settings.value(QStringLiteral("app/started"), false).toBool())
        model = bundledSample();
    settings.setValue(QStringLiteral("app/started"), true);
    if (runConfig)
        window.openWithConfig(model, *runConfig);
    else if (!model.isEmpty())
        window.openFile(model);

    if (parser.isSet(screenshot)) {
        const QString out = parser.value(screenshot);
        QObject::connect(&window, &ramiel::studio::MainWindow::modelReady, &app, [&window, out](bool ok) {
            // Let the first frames paint, then capture the whole window.
            QTimer::singleShot(800, &window, [&window, out, ok] {
                const bool saved = window.grab().save(out);
                std::fprintf(stderr, "ramiel-studio: %s %s\n", saved ? "wrote" : "could not write",
                             out.toLocal8Bit().constData());
                QApplication::exit(ok && saved ? 0 : 1);
            });
        });
    }
    return app.exec();
}
