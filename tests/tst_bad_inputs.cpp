// Bad input gets a specific error that names the file, from the library and
// from the CLI (one line on stderr, a documented exit code). Never a crash.
#include "core/onnx/onnx_import.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "core/util/text.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace ramiel;

class TestBadInputs : public QObject {
    Q_OBJECT
private:
    void corpusRows()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("message");
        const QString bad = test::sourcePath("tests/data/bad/");
        auto row = [&](const char* name, ErrorKind k, const char* msg) {
            QTest::newRow(name) << bad + name << int(k) << QString(msg);
        };
        row("empty.onnx", ErrorKind::NotOnnx, "file is empty");
        row("random_bytes.onnx", ErrorKind::NotOnnx, "not an ONNX model");
        row("text_file.onnx", ErrorKind::NotOnnx, "the file is text");
        row("truncated.onnx", ErrorKind::NotOnnx, "file is truncated");
        row("undefined_value.onnx", ErrorKind::InvalidGraph, "'ghost' used by node 'reads_ghost'");
        row("cyclic.onnx", ErrorKind::InvalidGraph, "graph has a cycle");
        row("two_producers.onnx", ErrorKind::InvalidGraph, "produced by two nodes");
        row("empty_graph.onnx", ErrorKind::InvalidGraph, "graph is empty");
        row("missing_external_data.onnx", ErrorKind::ExternalData, "'missing_weights.bin', which does not exist");
        row("external_data_outside.onnx", ErrorKind::ExternalData, "outside the model's folder");
        row("short_initializer.onnx", ErrorKind::InvalidGraph, "holds 8 bytes of data");
        QTest::newRow("no such file") << bad + "does_not_exist.onnx" << int(ErrorKind::Io) << QString("no such file");
        QTest::newRow("directory") << bad << int(ErrorKind::Io) << QString("is a directory");
    }

private Q_SLOTS:
    void library_data() { corpusRows(); }
    void library()
    {
        QFETCH(QString, file);
        QFETCH(int, kind);
        QFETCH(QString, message);
        try {
            loadOnnx(file.toStdString());
            QFAIL("the model loaded");
        } catch (const Error& e) {
            QCOMPARE(int(e.kind()), kind);
            QCOMPARE(QString::fromStdString(e.file()), file);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
        }
    }

    void cli_data() { corpusRows(); }
    void cli()
    {
        QFETCH(QString, file);
        QFETCH(int, kind);
        QFETCH(QString, message);
        const auto r = test::runCli({"info", file});
        QCOMPARE(r.exitCode, kind);
        QVERIFY(r.out.isEmpty());
        const QStringList lines = r.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].startsWith("ramiel: error: " + file + ": "), qPrintable(lines[0]));
        QVERIFY2(lines[0].contains(message), qPrintable(lines[0]));
    }

    // Every prefix of a valid model is refused cleanly (or loads, if it ends on
    // a field boundary and still forms a valid model): never a crash.
    void everyTruncationIsHandled()
    {
        QFile f(test::sourcePath("resources/models/inception_sample.onnx"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        int refused = 0;
        for (int len = 0; len < bytes.size(); len += 97) {
            try {
                loadOnnxFromBytes(std::string_view(bytes.constData(), size_t(len)), "prefix.onnx", {});
            } catch (const Error& e) {
                QVERIFY(e.kind() == ErrorKind::NotOnnx || e.kind() == ErrorKind::InvalidGraph);
                ++refused;
            }
        }
        QVERIFY(refused > 0);
    }

    // Flipped bytes anywhere in a valid model: an error or a model, never a crash.
    void corruptedBytesAreHandled()
    {
        QFile f(test::sourcePath("resources/models/inception_sample.onnx"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray original = f.readAll();
        quint32 seed = 12345;
        auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
        for (int trial = 0; trial < 300; ++trial) {
            QByteArray bytes = original;
            for (int k = 0; k < 4; ++k)
                bytes[int(next() % quint32(bytes.size()))] = char(next() & 0xff);
            try {
                loadOnnxFromBytes(std::string_view(bytes.constData(), size_t(bytes.size())), "corrupt.onnx", {});
            } catch (const Error&) {
            }
        }
    }

    // Found by tests/fuzz: ONNX 1.12's shape inference crashes on a Scan without
    // num_scan_inputs. Run in a child process, the crash costs shapes, not the process.
    void crashInShapeInferenceIsContained()
    {
        const QString file = test::sourcePath("tests/data/bad/scan_missing_attribute.onnx");
        const Model m = loadOnnx(file.toStdString());
        QCOMPARE(m.graph.nodeCount(), size_t(1));
        bool warned = false;
        for (const auto& w : m.warnings)
            warned = warned || QString::fromStdString(w).contains("crashed");
        QVERIFY(warned);
        const auto r = test::runCli({"info", file, "--machine", test::sourcePath("tests/data/machine.json")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("crashed"));
    }

    // Names are arbitrary bytes: messages stay one printable line.
    void hostileNamesAreEscaped()
    {
        const std::string name("a\nb\0c\x1b[31md\xff", 12);
        const Error e(ErrorKind::InvalidGraph, "m.onnx", "value '" + name + "' is bad");
        QCOMPARE(QString(e.what()), QString("m.onnx: value 'a\\x0ab\\x00c\\x1b[31md\\xff' is bad"));
        QCOMPARE(printable("caf\xc3\xa9 \xe2\x86\x92 ok\\"), std::string("caf\xc3\xa9 \xe2\x86\x92 ok\\\\"));
        QCOMPARE(printable("\xc0\xaf"), std::string("\\xc0\\xaf"));  // overlong encoding
    }

    // Output file names come from the model: never a path, never hidden, never empty.
    void outputFileNamesAreSanitized_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("file");
        QTest::newRow("plain") << "logits" << "logits";
        QTest::newRow("path") << "../../etc/passwd" << "_._.._etc_passwd";
        QTest::newRow("slash") << "/abs/out" << "_abs_out";
        QTest::newRow("dot") << "." << "_.";
        QTest::newRow("dotdot") << ".." << "_..";
        QTest::newRow("empty") << "" << "_";
        QTest::newRow("unicode") << "caf\u00e9 out" << "caf___out";
    }

    void outputFileNamesAreSanitized()
    {
        QFETCH(QString, name);
        QFETCH(QString, file);
        QCOMPARE(QString::fromStdString(sanitizedFileName(name.toStdString())), file);
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        QTest::newRow("no command") << QStringList{} << "subcommand";
        QTest::newRow("unknown option") << QStringList{"info", sample, "--frobnicate"} << "frobnicate";
        QTest::newRow("bad shape") << QStringList{"info", sample, "--shape", "image"} << "NAME=DIMS";
        QTest::newRow("shape of unknown input") << QStringList{"info", sample, "--shape", "nope=1,3,64,64"}
                                                << "not a graph input";
        QTest::newRow("bad machine file") << QStringList{"info", sample, "--machine", sample}
                                          << "not a machine-constants file";
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto r = test::runCli(args);
        QCOMPARE(r.exitCode, int(ErrorKind::Usage));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestBadInputs)
#include "tst_bad_inputs.moc"
