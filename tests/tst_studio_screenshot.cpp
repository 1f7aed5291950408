// Ramiel Studio for real: the app under a virtual X display (Xvfb) on
// googlenet, captured to a PNG in the build tree, with pixel checks that the
// clusters' colors and the critical-path highlight are on screen.
#include "views/palette.h"

#include "test_support.h"

#include <QDir>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

#include <cmath>

class TestStudioScreenshot : public QObject {
    Q_OBJECT

private:
    static int pixelsNear(const QImage& image, QColor color, int tolerance = 6)
    {
        int count = 0;
        for (int y = 0; y < image.height(); ++y) {
            const QRgb* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
            for (int x = 0; x < image.width(); ++x)
                if (std::abs(qRed(line[x]) - color.red()) <= tolerance &&
                    std::abs(qGreen(line[x]) - color.green()) <= tolerance &&
                    std::abs(qBlue(line[x]) - color.blue()) <= tolerance)
                    ++count;
        }
        return count;
    }

private Q_SLOTS:
    void googlenetUnderXvfb_data()
    {
        QTest::addColumn<int>("workers");
        QTest::newRow("P=2") << 2;
        QTest::newRow("P=4") << 4;
    }
    void googlenetUnderXvfb()
    {
        QFETCH(int, workers);
        const QString xvfb = QStandardPaths::findExecutable("xvfb-run");
        if (xvfb.isEmpty())
            QFAIL("xvfb-run is missing: apt-get install xvfb xauth");
        const QString out = QDir(RAMIEL_SCREENSHOT_DIR).filePath(QStringLiteral("studio-googlenet-P%1.png").arg(workers));
        QDir().mkpath(RAMIEL_SCREENSHOT_DIR);
        QFile::remove(out);
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");  // a real X display, not offscreen
        env.insert("XDG_CONFIG_HOME", QDir(RAMIEL_SCREENSHOT_DIR).filePath("config"));
        app.setProcessEnvironment(env);
        app.start(xvfb, {"-a", "-s", "-screen 0 1600x1000x24", RAMIEL_STUDIO, "--machine",
                         ramiel::test::sourcePath("tests/data/machine.json"), "--workers", QString::number(workers),
                         "--screenshot", out, ramiel::test::modelPath("googlenet")});
        QVERIFY(app.waitForFinished(120000));
        QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
        QImage image(out);
        QVERIFY2(!image.isNull(), qPrintable(out));
        image = image.convertToFormat(QImage::Format_RGB32);
        QVERIFY(image.width() >= 1000);
        for (int c = 0; c < workers; ++c) {
            const int n = pixelsNear(image, ramiel::studio::clusterColor(c));
            QVERIFY2(n > 500, qPrintable(QStringLiteral("cluster %1's color: %2 pixels").arg(c).arg(n)));
        }
        const int critical = pixelsNear(image, QColor(0xc0, 0x1c, 0x28), 30);
        QVERIFY2(critical > 200, qPrintable(QStringLiteral("critical path: %1 pixels").arg(critical)));
    }
};

QTEST_MAIN(TestStudioScreenshot)
#include "tst_studio_screenshot.moc"
