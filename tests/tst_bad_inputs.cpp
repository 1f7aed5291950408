// Bad input gets a specific error that names the file, from the library and
// from the CLI (one line on stderr, a documented exit code). Never a crash.
#include "core/analysis/cost_model.h"
#include "core/ir/fused_ops.h"
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/passes/registry.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"
#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "core/util/resources.h"
#include "core/util/text.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <onnx/defs/schema.h>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <climits>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ramiel;
using test::OnnxBuilder;

namespace {

// The generated corpus uses the newest opset ONNX 1.12 defines.
constexpr int kCorpusOpset = 17;

// One node named "bad" of `op` reading graph inputs x0.. and writing graph
// outputs y0..; with no outputs, x0 (or a spare input) is the graph's output.
OnnxBuilder oneNode(const std::string& op, int inputs, int outputs, int opset = kCorpusOpset,
                    const std::string& domain = {})
{
    OnnxBuilder b(opset);
    auto* n = b.model().mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name("bad");
    n->set_domain(domain);
    for (int i = 0; i < inputs; ++i) {
        b.input("x" + std::to_string(i), {1, 2, 4, 4});
        n->add_input("x" + std::to_string(i));
    }
    for (int i = 0; i < outputs; ++i) {
        n->add_output("y" + std::to_string(i));
        b.output("y" + std::to_string(i));
    }
    if (outputs == 0) {
        if (inputs == 0)
            b.input("x0", {1, 2, 4, 4});
        b.output("x0", {1, 2, 4, 4});
    }
    return b;
}

onnx::NodeProto& nodeOf(OnnxBuilder& b) { return *b.model().mutable_graph()->mutable_node(0); }

// An attribute of a type the schema does not give it: a string "abc", or the int 1 where a string belongs.
void setWrongType(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType expected)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    if (expected == onnx::AttributeProto::STRING) {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(1);
    } else {
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("abc");
    }
}

void setString(onnx::NodeProto& n, const std::string& name, const std::string& value)
{
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
}

// An initializer whose data lies in `location` (in the model's folder).
void addExternalInitializer(OnnxBuilder& b, const std::string& name, int64_t count, const std::string& location,
                            const std::string& offset = {}, const std::string& length = {})
{
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(count);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const char* key, const std::string& value) {
        auto* e = t->add_external_data();
        e->set_key(key);
        e->set_value(value);
    };
    entry("location", location);
    if (!offset.empty())
        entry("offset", offset);
    if (!length.empty())
        entry("length", length);
}

// Every CLI run that verifyCliError checked, for the summary.
int cliErrorChecks = 0;

// The CLI's answer: `exitCode`, nothing on stdout, one line on stderr naming the file and containing `messages`.
void verifyCliError(const QStringList& args, const QString& file, int exitCode, const QStringList& messages)
{
    ++cliErrorChecks;
    const auto r = test::runCli(args);
    QVERIFY2(r.exitCode == exitCode,
             qPrintable(QString("%1: exit %2, expected %3; %4").arg(args.join(' ')).arg(r.exitCode).arg(exitCode).arg(r.err)));
    QVERIFY2(r.out.isEmpty(), qPrintable(args.join(' ') + " printed: " + r.out));
    // Under RAMIEL_ASAN with allocator_may_return_null=1, ASan reports each refused malloc
    // on stderr itself (docs/testing.md); that line is ASan's, not Ramiel's.
    QStringList lines = r.err.trimmed().split('\n');
    lines.removeIf([](const QString& l) {
        return l.contains(QRegularExpression("^==\\d+==WARNING: AddressSanitizer failed to allocate"));
    });
    QVERIFY2(lines.size() == 1, qPrintable(r.err));
    QVERIFY2(lines[0].startsWith("ramiel: error: " + file + ": "), qPrintable(lines[0]));
    for (const QString& message : messages)
        QVERIFY2(lines[0].contains(message), qPrintable(lines[0] + " lacks: " + message));
}

struct CliRun {
    QProcess::ExitStatus status = QProcess::CrashExit;
    int code = -1;  // the exit code, or the signal that ended it
    QString out, err;
};

// The CLI with extra environment, a umask (-1: inherited) and, when `noOverride`,
// without the capabilities that let root write into a read-only folder.
CliRun runCliWith(const QStringList& args, const QMap<QString, QString>& env = {}, int umaskBits = -1,
                  bool noOverride = false)
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (auto it = env.begin(); it != env.end(); ++it)
        e.insert(it.key(), it.value());
    p.setProcessEnvironment(e);
    p.setChildProcessModifier([umaskBits, noOverride] {
        if (umaskBits >= 0)
            ::umask(mode_t(umaskBits));
        if (noOverride) {  // fails harmlessly where we are not root
            ::prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0);
            ::prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0);
        }
    });
    p.start(test::cliPath(), args);
    CliRun r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.status = p.exitStatus();
    r.code = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// A command that writes files into `dir`, and the files it writes.
struct WriteCommand {
    QStringList args;
    QStringList files;
};

WriteCommand writeCommand(const QString& name, const QString& dir)
{
    const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
    if (name == "optimize")
        return {{"optimize", sample, "-o", dir + "/out.onnx"}, {"out.onnx"}};
    if (name == "export")
        return {{"export", sample, "--lang", "python", "-o", dir, "--machine", test::sourcePath("tests/data/machine.json")},
                {"README.md", "model.py", "run.py", "weights.bin"}};  // sorted
    return {{"run", sample, "--save-outputs", dir}, {"logits.npy"}};
}

void addWriteCommandRows()
{
    QTest::addColumn<QString>("command");
    for (const char* c : {"optimize", "export", "run"})
        QTest::newRow(c) << QString(c);
}

// Every name in `dir`, hidden ones too, sorted.
QStringList entries(const QString& dir)
{
    QStringList names = QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
    names.sort();
    return names;
}

bool writeText(const QString& path, const QByteArray& text)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

QByteArray readText(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(unreadable)");
}

unsigned permissionBits(const QString& path)
{
    struct stat st {};
    return ::stat(path.toLocal8Bit().constData(), &st) == 0 ? unsigned(st.st_mode & 07777) : 0u;
}

// A pid that no process has now: a child that has exited and been reaped.
pid_t deadPid()
{
    const pid_t pid = ::fork();
    if (pid == 0)
        ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

QByteArray modelBytes(const OnnxBuilder& b)
{
    const std::string bytes = b.bytes();
    return QByteArray(bytes.data(), int(bytes.size()));
}

}  // namespace

class TestBadInputs : public QObject {
    Q_OBJECT
private:
    int corpusCases_ = 0;
    int corpusRefused_ = 0;
    int cliRuns_ = 0;

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
        row("one_node_writes_twice.onnx", ErrorKind::InvalidGraph, "node 'split' writes 'y' as two of its outputs");
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
        const QString machine = test::sourcePath("tests/data/machine.json");
        const auto r = test::runCli({"info", file, "--machine", machine, "--passes", "none"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("crashed"));
        // The passes read the attribute the node lacks: one line naming the file, the node and the attribute.
        const auto withPasses = test::runCli({"info", file, "--machine", machine});
        QCOMPARE(withPasses.exitCode, 5);
        QCOMPARE(withPasses.err.trimmed(), "ramiel: error: " + file +
                                               ": node 'Scan_0' (Scan): lacks the required attribute 'num_scan_inputs'");
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

    // Every operator the runtime claims, given a node with no inputs, with no
    // outputs, with one input too many, and each attribute of its schema with
    // the wrong type: refused as an invalid graph by everything that runs or
    // rewrites nodes (the pass pipeline that `run`, `optimize` and `profile`
    // start with; the runtime's compile step of `run`, `bench` and Studio),
    // with one line naming the node and the rule.
    // `every`: keep every n-th case only.
    static void corpusRows(int every)
    {
        QTest::addColumn<QByteArray>("model");
        QTest::addColumn<QString>("rule");
        int index = 0;
        auto row = [&](const std::string& name, const OnnxBuilder& b, const std::string& rule) {
            if (index++ % every != 0)
                return;
            const std::string bytes = b.bytes();
            QTest::newRow(name.c_str()) << QByteArray(bytes.data(), int(bytes.size())) << QString::fromStdString(rule);
        };
        int operators = 0;
        for (const std::string& op : runtime().supportedOperators()) {
            const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, kCorpusOpset, "");
            // Operators of opsets newer than this ONNX release (Mish and GroupNormalization 18, Gelu 20)
            // have no schema to break.
            if (!schema && (op == "Mish" || op == "Gelu" || op == "GroupNormalization"))
                continue;
            QVERIFY2(schema, op.c_str());
            ++operators;
            const int minIn = schema->min_input(), maxIn = schema->max_input();
            const int minOut = std::max(schema->min_output(), 1);
            if (minIn > 0)
                row(op + ": no inputs", oneNode(op, 0, minOut), "has 0 inputs");
            if (schema->min_output() > 0)
                row(op + ": no outputs", oneNode(op, minIn, 0), "has 0 outputs");
            if (maxIn < INT_MAX)
                row(op + ": one input too many", oneNode(op, maxIn + 1, minOut),
                    "has " + std::to_string(maxIn + 1) + " input");
            for (const auto& [name, attr] : schema->attributes()) {
                OnnxBuilder b = oneNode(op, minIn, minOut);
                setWrongType(nodeOf(b), name, attr.type);
                row(op + ": " + name + " of the wrong type", b, "attribute '" + name + "' is");
            }
        }
        QVERIFY(operators > 50);
    }

    void generatedCorpus_data() { corpusRows(1); }

    void generatedCorpus()
    {
        QFETCH(QByteArray, model);
        QFETCH(QString, rule);
        ++corpusCases_;
        const Model m = loadOnnxFromBytes(std::string_view(model.constData(), size_t(model.size())), "corpus.onnx", {});
        auto expectRefusal = [&](const char* where, const std::function<void()>& f) {
            try {
                f();
                QFAIL(qPrintable(QString(where) + " accepted the node"));
            } catch (const Error& e) {
                const QString what = e.what();
                QVERIFY2(e.kind() == ErrorKind::InvalidGraph, qPrintable(QString(where) + ": " + what));
                QVERIFY2(what.startsWith("corpus.onnx: node 'bad' ("), qPrintable(QString(where) + ": " + what));
                QVERIFY2(what.contains(rule), qPrintable(QString(where) + ": " + what + " lacks: " + rule));
                QVERIFY2(!what.contains('\n'), qPrintable(what));
            }
        };
        expectRefusal("the pass pipeline", [&] {
            Model copy = m;
            passes::runPipeline(copy, passes::parsePassList("default"), {});
        });
        if (QTest::currentTestFailed())
            return;
        expectRefusal("the runtime's compile step", [&] { runtime().compile(m); });
        if (!QTest::currentTestFailed())
            ++corpusRefused_;
    }

    // Every 20th case of the corpus through the CLI (the rest as above, through the
    // same library calls): exit code 5 and one line, from run, optimize and export
    // (which plans the model first and checks its nodes in code generation).
    void generatedCorpusCli_data() { corpusRows(20); }

    void generatedCorpusCli()
    {
        QFETCH(QByteArray, model);
        QFETCH(QString, rule);
        QTemporaryDir dir;
        const QString file = dir.filePath("corpus.onnx");
        QVERIFY(writeText(file, model));
        const QStringList exportArgs{"export", file, "--lang", "python", "-o", dir.filePath("out"), "--machine",
                                     test::sourcePath("tests/data/machine.json")};
        for (const QStringList& args : {QStringList{"run", file}, QStringList{"optimize", file}, exportArgs}) {
            verifyCliError(args, file, int(ErrorKind::InvalidGraph), {"node 'bad' (", rule});
            ++cliRuns_;
        }
        QVERIFY(!QDir(dir.filePath("out")).exists());
    }

    // Hand-made hostile models, built here (in a fresh folder each, for the
    // symbolic links) and given to run, optimize and export.
    void hostileModels_data()
    {
        QTest::addColumn<QByteArray>("model");
        QTest::addColumn<QString>("setup");  // what else the folder holds
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("message");
        // kind 0: the model is fine.
        auto row = [](const char* name, const OnnxBuilder& b, const char* setup, ErrorKind kind, const char* message) {
            const std::string bytes = b.bytes();
            QTest::newRow(name) << QByteArray(bytes.data(), int(bytes.size())) << QString(setup) << int(kind)
                                << QString(message);
        };
        const ErrorKind fine = ErrorKind(0);
        auto external = [](const std::string& location, const std::string& offset = {}, const std::string& length = {}) {
            OnnxBuilder b(13);
            b.input("x", {4}).output("y", {4});
            addExternalInitializer(b, "w", 4, location, offset, length);
            b.node("Add", {"x", "w"}, {"y"}, "add");
            return b;
        };
        row("external data file links outside", external("w.bin"), "w.bin -> /etc/passwd", ErrorKind::ExternalData,
            "outside the model's folder");
        row("external data subfolder links outside", external("etc/passwd"), "etc -> /etc", ErrorKind::ExternalData,
            "outside the model's folder");
        row("external data link inside the folder", external("link.bin"), "link.bin -> w.bin", fine,
            "");
        row("external data offset 12abc", external("w.bin", "12abc"), "w.bin", ErrorKind::ExternalData,
            "offset '12abc', which is not a whole number");
        row("external data negative length", external("w.bin", "0", "-16"), "w.bin", ErrorKind::ExternalData,
            "length '-16', which is not a whole number");
        row("external data offset past int64", external("w.bin", "99999999999999999999"), "w.bin",
            ErrorKind::ExternalData, "offset '99999999999999999999'");
        row("external data offset past the end", external("w.bin", "4096"), "w.bin", ErrorKind::ExternalData,
            "past the end of 'w.bin'");

        auto relu = [](int opset) {
            OnnxBuilder b(opset);
            b.input("x", {1, 4}).output("y", {1, 4});
            b.node("Relu", {"x"}, {"y"}, "relu");
            return b;
        };
        row("opset 0", relu(0), "", ErrorKind::InvalidGraph, "node 'relu' (Relu): the model imports no valid version of the ONNX operator set (opset 0)");
        row("opset -3", relu(-3), "", ErrorKind::InvalidGraph, "(opset -3)");
        {
            OnnxBuilder b(13);
            b.input("x", {1, 4}).input("x", {1, 4}).output("y", {1, 4});
            b.node("Relu", {"x"}, {"y"}, "relu");
            row("graph input listed twice", b, "", ErrorKind::InvalidGraph, "graph input 'x' is listed twice");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {2, 3}).input("w", {3, 2}).output("y", {2, 3});
            b.initializer("w", {2, 3}, 1.0f);
            b.node("Add", {"x", "w"}, {"y"}, "add");
            row("initializer contradicts its declared shape", b, "", ErrorKind::InvalidGraph,
                "initializer 'w' has shape 2x3, the graph input of that name declares 3x2");
        }
        {
            OnnxBuilder b(13);
            b.output("y", {-1});
            b.initializerInt64("start", {0});
            b.initializerInt64("limit", {10});
            b.initializerInt64("step", {0});
            for (auto& t : *b.model().mutable_graph()->mutable_initializer())
                t.clear_dims();  // scalars
            b.node("Range", {"start", "limit", "step"}, {"y"}, "range");
            row("Range with step 0", b, "", ErrorKind::InvalidGraph, "node 'range' (Range): the step 'step' is 0");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {2, 3}).output("y");
            b.initializerInt64("s", {1 << 20, 1 << 20});
            b.node("Expand", {"x", "s"}, {"y"}, "expand");
            row("Expand to a shape the input does not broadcast to", b, "", ErrorKind::InvalidGraph,
                "node 'expand' (Expand): input 'x' cannot broadcast to the shape [1048576, 1048576] (3 against 1048576)");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {2, 3}).output("y");
            b.initializerInt64("starts", {0, 0});
            b.initializerInt64("ends", {1, 1});
            b.initializerInt64("axes", {1, -1});
            b.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "slice");
            row("Slice naming an axis twice", b, "", ErrorKind::InvalidGraph,
                "node 'slice' (Slice): axes [1, -1] names an axis twice");
        }
        auto conv = [](std::vector<int64_t> strides, int64_t group = 1) {
            OnnxBuilder b(13);
            b.input("x", {1, 2, 8, 8}).output("y");
            b.initializer("w", {4, 2, 3, 3}, 0.1f);
            auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv");
            if (!strides.empty())
                OnnxBuilder::setInts(n, "strides", std::move(strides));
            if (group != 1)
                OnnxBuilder::setInt(n, "group", group);
            return b;
        };
        row("Conv with stride 0", conv({0, 1}), "", ErrorKind::InvalidGraph,
            "node 'conv' (Conv): strides [0, 1]: each must be positive");
        row("Conv with 3 strides for 2 dimensions", conv({1, 1, 1}), "", ErrorKind::InvalidGraph,
            "strides [1, 1, 1] has 3 values, a window over 2 spatial dimensions needs 2");
        row("Conv group does not divide the channels", conv({1, 1}, 3), "", ErrorKind::InvalidGraph,
            "group 3 does not divide the weight's 4 output channels");
        {
            OnnxBuilder b = conv({});
            OnnxBuilder::setInts(nodeOf(b), "dilations", {4, 1});
            row("Conv whose dilated window is larger than its input", b, "", ErrorKind::InvalidGraph,
                "node 'conv' (Conv): the window spans 9 along spatial dimension 0 (kernel 3, dilation 4), more than "
                "the input's 8 with its pads");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {1, 2, 8, 8}).output("y");
            auto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
            OnnxBuilder::setInts(pool, "kernel_shape", {3, 3});
            OnnxBuilder::setInts(pool, "pads", {1, 3, 1, 1});
            row("MaxPool whose pads are not smaller than its kernel", b, "", ErrorKind::InvalidGraph,
                "node 'pool' (MaxPool): pads [1, 3, 1, 1] are not all smaller than kernel_shape [3, 3]");
        }
        {
            OnnxBuilder b = conv({});
            setString(nodeOf(b), "strides", "abc");
            row("Conv with strides abc", b, "", ErrorKind::InvalidGraph,
                "node 'conv' (Conv): attribute 'strides' is a string, the operator needs ints");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {1, 2, 4, 4}).output("y");
            b.initializer("s", {2}, 1.0f);
            b.node("BatchNormalization", {"x", "s", "s"}, {"y"}, "bn");
            row("BatchNormalization missing inputs", b, "", ErrorKind::InvalidGraph,
                "node 'bn' (BatchNormalization): has 3 inputs, the operator takes 5");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {1, 2, 4, 4}).output("y");
            b.initializer("s", {3}, 1.0f);
            b.node("BatchNormalization", {"x", "s", "s", "s", "s"}, {"y"}, "bn");
            row("BatchNormalization with the wrong channel count", b, "", ErrorKind::InvalidGraph,
                "holds 3 values, the input has 2 channels");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {4, 4}).output("x", {4, 4});
            b.node("Split", {"x"}, {}, "split");
            row("Split with no outputs", b, "", ErrorKind::InvalidGraph, "node 'split' (Split): has 0 outputs");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {4, 4}).output("y");
            auto& n = b.node("Relu", {"x"}, {"y"}, "relu");
            auto* a = n.add_attribute();
            a->set_name("alpha");  // no type
            row("attribute without a type", b, "", ErrorKind::InvalidGraph,
                "node 'relu' (Relu): has attribute 'alpha', which the operator does not define");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {4, 4}).output("y");
            auto& n = b.node("LeakyRelu", {"x"}, {"y"}, "leaky");
            auto* a = n.add_attribute();
            a->set_name("alpha");  // no type
            row("known attribute without a type", b, "", ErrorKind::InvalidGraph,
                "attribute 'alpha' is of no type, the operator needs a float");
        }
        {
            OnnxBuilder b(13);
            b.input("x", {4, 4}).output("y");
            b.node("Range", {"x", "x", "x"}, {"y"}, "range");
            b.model().mutable_opset_import(0)->set_version(9);
            row("operator newer than the opset", b, "", ErrorKind::InvalidGraph,
                "the operator does not exist in opset 9 (ONNX defines it from opset 11)");
        }
        {
            OnnxBuilder b = oneNode(kFusedConv, 2, 1, 13, kRamielDomain);
            auto* o = b.model().add_opset_import();
            o->set_domain(kRamielDomain);
            o->set_version(1);
            setString(nodeOf(b), "activation", "Tanh");
            row("FusedConv with an unknown activation", b, "", ErrorKind::InvalidGraph,
                "activation 'Tanh' is not one of Relu, LeakyRelu, Sigmoid, HardSwish, Clip, Silu");
        }
        {
            OnnxBuilder b = oneNode(kFusedConv, 0, 1, 13, kRamielDomain);
            setString(nodeOf(b), "activation", "Relu");
            row("FusedConv with no inputs", b, "", ErrorKind::InvalidGraph, "has 0 inputs, the operator takes 2 to 4");
        }
        {
            OnnxBuilder b = oneNode(kGelu, 2, 1, 13, kRamielDomain);
            row("Gelu with two inputs", b, "", ErrorKind::InvalidGraph, "Gelu takes one input and gives one output");
        }
        {
            OnnxBuilder b = oneNode(kGelu, 1, 1, 13, kRamielDomain);
            setString(nodeOf(b), "approximate", "tanh");
            row("Gelu with an attribute", b, "", ErrorKind::InvalidGraph, "Gelu has no attributes; this one has 'approximate'");
        }
        {
            OnnxBuilder b = oneNode(kSilu, 1, 2, 13, kRamielDomain);
            row("Silu with two outputs", b, "", ErrorKind::InvalidGraph, "Silu takes one input and gives one output");
        }
        // ChannelShuffle: two inputs of 2 channels each, cut into two outputs.
        auto shuffle = [&](const char* what, std::vector<int64_t> group, std::vector<int64_t> split, const char* message) {
            OnnxBuilder b = oneNode(kChannelShuffle, 2, 2, 13, kRamielDomain);
            if (!group.empty())
                OnnxBuilder::setInt(nodeOf(b), "group", group[0]);
            OnnxBuilder::setInts(nodeOf(b), "split", std::move(split));
            row(what, b, "", ErrorKind::InvalidGraph, message);
        };
        shuffle("ChannelShuffle without a group", {}, {2, 2}, "lacks the required attribute 'group'");
        shuffle("ChannelShuffle in 0 groups", {0}, {2, 2}, "group 0 is below 1");
        shuffle("ChannelShuffle in groups that do not divide", {3}, {2, 2},
                "split [2, 2] sums to 4 channels, which group 3 does not divide");
        shuffle("ChannelShuffle cut short", {2}, {1, 1}, "the inputs have 4 channels, split [1, 1] sums to 2");
        shuffle("ChannelShuffle with a split per output missing", {2}, {4}, "split [4] has 1 entries for 2 outputs");
        shuffle("ChannelShuffle with an empty output", {1}, {4, 0}, "split [4, 0] has an entry below 1");
        {
            OnnxBuilder b = oneNode(kChannelShuffle, 1, 1, 13, kRamielDomain);
            OnnxBuilder::setInt(nodeOf(b), "group", 2);
            row("ChannelShuffle without a split", b, "", ErrorKind::InvalidGraph, "lacks the required attribute 'split'");
        }
        // FusedBatchNorm (fuse-batchnorm's): parts of [1, 2, 4, 4], then four statistics.
        auto batchNorm = [&](const char* what, int parts, std::vector<int64_t> stats, const char* activation,
                             const char* message) {
            OnnxBuilder b = oneNode(kFusedBatchNorm, parts, 1, 13, kRamielDomain);
            for (const char* s : {"scale", "bias", "mean", "var"}) {
                b.initializer(s, stats, 1.0f);
                nodeOf(b).add_input(s);
            }
            if (*activation)
                setString(nodeOf(b), "activation", activation);
            row(what, b, "", ErrorKind::InvalidGraph, message);
        };
        batchNorm("FusedBatchNorm without a part", 0, {2}, "",
                  "FusedBatchNorm takes one or more inputs and then scale, B, mean and variance, and gives one output");
        batchNorm("FusedBatchNorm with statistics for fewer channels", 2, {2}, "Relu", "input 2 has 2 values for 4 channels");
        batchNorm("FusedBatchNorm with statistics of rank 2", 1, {2, 1}, "", "input 1 has rank 2, a statistic of one dimension");
        batchNorm("FusedBatchNorm with an unknown activation", 1, {2}, "Tanh",
                  "activation 'Tanh' is not one of Relu, LeakyRelu, Sigmoid, HardSwish, Clip, Silu");
        batchNorm("FusedBatchNorm with a Clip without bounds", 1, {2}, "Clip", "activation Clip takes 2 activation_params, 0 given");
        {
            OnnxBuilder b = oneNode(kFusedBatchNorm, 5, 1, 13, kRamielDomain);
            OnnxBuilder::setInt(nodeOf(b), "epsilon", 1);
            row("FusedBatchNorm with an int epsilon", b, "", ErrorKind::InvalidGraph, "attribute 'epsilon' is an int, it needs a float");
        }
        // FusedGroupNorm (fuse-group-norm's): X [1, 2, 4, 4], scale and bias.
        auto groupNorm = [&](const char* what, int64_t groups, std::vector<int64_t> params, const char* activation,
                             const char* message) {
            OnnxBuilder b = oneNode(kFusedGroupNorm, 1, 1, 13, kRamielDomain);
            for (const char* s : {"scale", "bias"}) {
                b.initializer(s, params, 1.0f);
                nodeOf(b).add_input(s);
            }
            if (groups > 0)
                OnnxBuilder::setInt(nodeOf(b), "num_groups", groups);
            if (*activation)
                setString(nodeOf(b), "activation", activation);
            row(what, b, "", ErrorKind::InvalidGraph, message);
        };
        groupNorm("FusedGroupNorm without num_groups", 0, {2}, "", "lacks the required attribute 'num_groups'");
        groupNorm("FusedGroupNorm in groups that do not divide", 3, {2}, "Relu",
                  "num_groups 3 does not divide the 2 channels of 'x0'");
        groupNorm("FusedGroupNorm with a scale for fewer channels", 2, {1}, "", "input 1 'scale' holds 1 values, 'x0' has 2 channels");
        groupNorm("FusedGroupNorm with a scale of rank 2", 1, {2, 1}, "",
                  "input 1 'scale' has rank 2, it must hold one value per channel (rank 1)");
        groupNorm("FusedGroupNorm with a LeakyRelu without alpha", 1, {2}, "LeakyRelu",
                  "activation LeakyRelu takes 1 activation_params, 0 given");
        {
            OnnxBuilder b = oneNode(kFusedGroupNorm, 1, 1, 13, kRamielDomain);
            row("FusedGroupNorm without a scale", b, "", ErrorKind::InvalidGraph,
                "FusedGroupNorm takes three inputs (X, scale, bias) and gives one output");
        }
        // LayerNormalization (fuse-layer-norm's): X, Scale (, B), a negative axis.
        {
            OnnxBuilder b = oneNode(kLayerNorm, 1, 1, 13, kRamielDomain);
            row("LayerNormalization without a scale", b, "", ErrorKind::InvalidGraph,
                "LayerNormalization takes two or three inputs (X, Scale, B) and gives one output");
        }
        auto layerNorm = [&](const char* what, int64_t axis, std::vector<int64_t> scale, const char* message) {
            OnnxBuilder b(13);
            b.input("x", {1, 2, 4, 4}).output("y");
            b.initializer("s", std::move(scale), 1.0f);
            auto& n = b.node(kLayerNorm, {"x", "s"}, {"y"}, "bad");
            n.set_domain(kRamielDomain);
            OnnxBuilder::setInt(n, "axis", axis);
            row(what, b, "", ErrorKind::InvalidGraph, message);
        };
        layerNorm("LayerNormalization over a positive axis", 3, {4}, "axis 3 must be negative (the last -axis dimensions)");
        layerNorm("LayerNormalization over more than X has", -5, {1, 1, 2, 4, 4}, "axis -5 is out of range for X 'x' of rank 4");
        layerNorm("LayerNormalization whose scale is of another rank", -1, {4, 4}, "Scale 's' has rank 2, it needs 1");
        layerNorm("LayerNormalization whose scale is of other sizes", -2, {4, 2}, "Scale 's' is not of X's last 2 dimensions");
        {
            OnnxBuilder b = oneNode(kMatMulAdd, 2, 1, 13, kRamielDomain);
            row("MatMulAdd with two inputs", b, "", ErrorKind::InvalidGraph,
                "MatMulAdd takes three inputs (A, B, C) and gives one output");
        }
        {
            OnnxBuilder b = oneNode(kMatMulAdd, 3, 1, 13, kRamielDomain);
            row("MatMulAdd with a 4-D B", b, "", ErrorKind::InvalidGraph, "B 'x1' has rank 4, it needs 2");
        }
        {
            OnnxBuilder b(13);
            b.input("a", {2, 3, 8}).output("y");
            b.initializer("w", {8, 4}, 0.5f);
            b.initializer("c", {3, 4}, 0.5f);
            b.node(kMatMulAdd, {"a", "w", "c"}, {"y"}, "bad").set_domain(kRamielDomain);
            row("MatMulAdd whose C is not a row", b, "", ErrorKind::InvalidGraph,
                "node 'bad' (ai.ramiel.MatMulAdd): C 'c' is not a row of B's 4 columns");
        }
        {
            OnnxBuilder b(13);
            b.input("a", {2, 3, 8}).output("y");
            b.initializer("w", {8, 4}, 0.5f);
            b.initializer("c", {4}, 0.5f);
            auto& n = b.node(kMatMulAdd, {"a", "w", "c"}, {"y"}, "bad");
            n.set_domain(kRamielDomain);
            setString(n, "activation", "Tanh");
            row("MatMulAdd with an activation other than Gelu", b, "", ErrorKind::InvalidGraph,
                "activation 'Tanh' is not Gelu, the one MatMulAdd takes");
        }
        {
            OnnxBuilder b = oneNode("Frobnicate", 1, 1, 13, kRamielDomain);
            row("unknown operator in Ramiel's domain", b, "", ErrorKind::InvalidGraph,
                "Ramiel's domain ai.ramiel has no operator 'Frobnicate'");
        }
    }

    void hostileModels()
    {
        QFETCH(QByteArray, model);
        QFETCH(QString, setup);
        QFETCH(int, kind);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath("model.onnx");
        QVERIFY(writeText(file, model));
        if (setup.contains("w.bin")) {  // 16 bytes of float data
            QFile w(dir.filePath("w.bin"));
            QVERIFY(w.open(QIODevice::WriteOnly) && w.write(QByteArray(16, '\0')) == 16);
        }
        if (setup.contains(" -> ")) {
            const QStringList link = setup.split(" -> ");
            if (link[0] == "w.bin")
                QFile::remove(dir.filePath("w.bin"));
            QVERIFY(QFile::link(link[1], dir.filePath(link[0])));
        }

        // The library, as run, optimize and export use it.
        try {
            Model m = loadOnnx(file.toStdString());
            passes::runPipeline(m, passes::parsePassList("default"), {});
            runtime().compile(m);
            QVERIFY2(kind == 0, "the model was accepted");
        } catch (const Error& e) {
            QVERIFY2(int(e.kind()) == kind, e.what());
            QCOMPARE(QString::fromStdString(e.file()), file);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
        }
        if (kind == 0)
            return;
        // The CLI: one line, the documented exit code.
        verifyCliError({"run", file}, file, kind, {message});
        verifyCliError({"optimize", file}, file, kind, {message});
        verifyCliError({"export", file, "--lang", "python", "-o", dir.filePath("out"), "--machine",
                        test::sourcePath("tests/data/machine.json")},
                       file, kind, {message});
        QVERIFY(!QDir(dir.filePath("out")).exists());
    }

    // Input files: the header alone (what sizes an open input) and the whole file
    // give the same answer; a bad file is refused naming it, never read past its end.
    void npyFiles_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("dims");  // "" where the file is refused
        QTest::addColumn<QString>("error");
        const auto v1 = [](const QByteArray& header, const QByteArray& data) {
            QByteArray h = header;
            while ((10 + h.size() + 1) % 64 != 0)
                h += ' ';
            h += '\n';
            return QByteArray("\x93NUMPY\x01\x00", 8) + char(h.size() & 0xff) + char(h.size() >> 8) + h + data;
        };
        const QByteArray f2x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        const QByteArray six(24, '\0');
        QTest::newRow("float 2x3") << v1(f2x3, six) << "2x3" << "";
        QTest::newRow("scalar") << v1("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", QByteArray(8, '\0'))
                                << "" << "";
        QByteArray v2 = v1(f2x3, six);
        v2[6] = 2;
        v2.insert(10, QByteArray(2, '\0'));
        QTest::newRow("version 2") << v2 << "2x3" << "";
        QTest::newRow("empty file") << QByteArray() << "" << "not a NumPy .npy file";
        QTest::newRow("magic only") << QByteArray("\x93NUMPY", 6) << "" << "not a NumPy .npy file";
        QTest::newRow("version 9") << QByteArray("\x93NUMPY\x09\x00\x10\x00", 10) << "" << "unsupported .npy version 9";
        QTest::newRow("header past the end") << QByteArray("\x93NUMPY\x01\x00\xff\xff{'descr'", 17) << ""
                                             << ".npy header is truncated";
        QTest::newRow("data short") << v1(f2x3, QByteArray(23, '\0')) << "" << "holds 23 bytes of data, shape 2x3 needs 24";
        QTest::newRow("data long") << v1(f2x3, QByteArray(25, '\0')) << "" << "holds 25 bytes of data";
        QTest::newRow("absurd shape") << v1("{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999999999, 99), }", six)
                                      << "" << "needs more";
        QTest::newRow("bad dimension") << v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", six) << ""
                                       << "bad dimension '-3'";
        QTest::newRow("no shape") << v1("{'descr': '<f4', 'fortran_order': False, }", six) << "" << "has no shape";
        QTest::newRow("object array") << v1("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", six) << ""
                                      << "unsupported .npy element type '|O'";
        QTest::newRow("Fortran order") << v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", six) << ""
                                       << "Fortran-ordered";
    }

    void npyFiles()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, dims);
        QFETCH(QString, error);
        QTemporaryDir dir;
        const QString file = dir.filePath("x.npy");
        QVERIFY(writeText(file, bytes));
        const auto joined = [](const std::vector<int64_t>& d) {
            QStringList parts;
            for (int64_t x : d)
                parts << QString::number(x);
            return parts.join('x');
        };
        for (const bool headerOnly : {true, false}) {
            try {
                const std::vector<int64_t> got = headerOnly ? readNpyHeader(file.toStdString()).dims
                                                            : readNpy(file.toStdString()).dims;
                QVERIFY2(error.isEmpty(), qPrintable("read, expected: " + error));
                QCOMPARE(joined(got), dims);
            } catch (const Error& e) {
                const QString what = QString::fromStdString(e.what());
                QVERIFY2(!error.isEmpty() && what.contains(error) && what.contains(file), qPrintable(what));
            }
        }
    }

    // Output names that clash once made file names still get a file each.
    void savedOutputsGetDistinctFiles_data()
    {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("files");
        QTest::newRow("out/1 and out_1") << QStringList{"out/1", "out_1"} << QStringList{"out_1.npy", "out_1_2.npy"};
        QTest::newRow("a suffix taken by name") << QStringList{"out_1_2", "out/1", "out_1"}
                                                << QStringList{"out_1_2.npy", "out_1.npy", "out_1_3.npy"};
    }

    void savedOutputsGetDistinctFiles()
    {
        QFETCH(QStringList, names);
        QFETCH(QStringList, files);
        OnnxBuilder b(13);
        b.input("x", {2, 3});
        for (const QString& name : names) {
            b.node("Neg", {"x"}, {name.toStdString()}, "neg_" + std::to_string(b.model().graph().node_size()));
            b.output(name.toStdString(), {2, 3});
        }
        QTemporaryDir dir;
        const QString file = dir.filePath("outputs.onnx");
        QFile f(file);
        const std::string bytes = b.bytes();
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size()));
        f.close();
        const QString out = dir.filePath("saved");
        const auto r = test::runCli({"run", file, "--save-outputs", out});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QStringList saved = QDir(out).entryList(QDir::Files);
        QStringList want = files;
        saved.sort();
        want.sort();
        QCOMPARE(saved, want);
        for (const QString& name : files)  // the mapping: each output's line, then where it went
            QVERIFY2(r.out.contains("saved " + out + "/" + name + "\n"), qPrintable(r.out));
        const QStringList lines = r.out.split('\n');
        for (int i = 0; i < names.size(); ++i) {
            const int at = lines.indexOf(QRegularExpression("^  " + QRegularExpression::escape(names[i]) + "  .*"));
            QVERIFY2(at >= 0 && at + 1 < lines.size(), qPrintable(r.out));
            QCOMPARE(lines[at + 1], "    saved " + out + "/" + files[i]);
        }
    }

    // Found by tests/fuzz/fuzz_onnx_run: models that must run, serially and on a
    // 2-worker schedule, with the same outputs. output_is_second_input.onnx: a graph
    // output that is the second graph input came back as the first from the
    // parallel executor. rnn_parallel_differs.onnx (ONNX's test_simple_rnn_defaults):
    // on two threads a share of one row and one step added its input's projection
    // into the layer's bias, which the other share then read.
    void fuzzFindingsRun_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("output is the second input") << "output_is_second_input.onnx";
        QTest::newRow("rnn") << "rnn_parallel_differs.onnx";
    }

    void fuzzFindingsRun()
    {
        QFETCH(QString, file);
        const Model m = loadOnnx(test::sourcePath("tests/data/bad/" + file).toStdString());
        const auto compiled = runtime().compile(m);
        const std::vector<Tensor> inputs = compiled->randomInputs(1, 7);
        compiled->setInputs(inputs);
        compiled->serialExecutor(1)->run();
        const std::vector<Tensor> serial = compiled->outputs();
        const Topology topo = buildTopology(m.graph);
        const CostTable costs =
            CostTable::fromStatic(m.graph, topo, estimateCosts(m.graph), MachineConstants{}, EdgeCostParameters{});
        compiled->parallelExecutor(planSchedule(SchedulingProblem::of(m.graph, topo, costs, 2), "linear").schedule)
            ->run();
        const std::vector<Tensor> parallel = compiled->outputs();
        QCOMPARE(parallel.size(), serial.size());
        for (size_t i = 0; i < serial.size(); ++i) {
            QCOMPARE(parallel[i].dims, serial[i].dims);
            QVERIFY(parallel[i].data == serial[i].data);
        }
        // Where an output is a graph input, it is that input.
        size_t k = 0;
        for (ValueId in : m.graph.inputs()) {
            if (m.graph.value(in).isConstant())
                continue;
            for (size_t i = 0; i < m.graph.outputs().size(); ++i)
                if (m.graph.outputs()[i] == in)
                    QVERIFY(serial[i].data == inputs[k].data);
            ++k;
        }
    }

    // Sizes larger than memory: refused before anything is allocated, or, where only
    // the run tells, the allocation failure is caught; exit code 8 and one line.
    // `setup`: "sparse:NAME:BYTES" makes a sparse file (no disk used), "npy:NAME:VALUE"
    // an int64 .npy holding VALUE; "FILE" and "DIR" in the arguments become the model and its folder.
    void resourceLimits_data()
    {
        QTest::addColumn<QByteArray>("model");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QList<QStringList>>("commands");
        QTest::addColumn<QString>("message");
        const QString machine = test::sourcePath("tests/data/machine.json");
        const QStringList run{"run", "FILE"}, info{"info", "FILE", "--machine", machine},
            optimize{"optimize", "FILE", "-o", "DIR/out.onnx"},
            exportPython{"export", "FILE", "--lang", "python", "-o", "DIR/code", "--machine", machine};
        const QList<QStringList> everything{info, run, optimize, exportPython};
        const int64_t huge = int64_t(1) << 40;
        {
            OnnxBuilder b(13);
            b.input("x", {huge}).output("y", {huge});
            b.node("Relu", {"x"}, {"y"}, "relu");
            QTest::newRow("input of 2^40 elements") << modelBytes(b) << "" << QList<QStringList>{run}
                                                     << "input 'x' float[1099511627776] needs 4.00 TiB, more than the";
        }
        {
            OnnxBuilder b(13);
            b.input("x", {huge}).output("y", {huge});
            addExternalInitializer(b, "w", huge, "big.bin");
            b.node("Add", {"x", "w"}, {"y"}, "add");
            QTest::newRow("initializer of 2^40 elements in external data")
                << modelBytes(b) << "sparse:big.bin:4398046511104" << everything
                << "initializer 'w' in 'big.bin' needs 4.00 TiB, more than the";
        }
        auto expand = [](const std::vector<int64_t>& shape) {
            OnnxBuilder b(13);
            b.input("x", {1}).output("y");
            if (shape.empty())
                b.input("s", {1}, onnx::TensorProto::INT64);
            else
                b.initializerInt64("s", shape);
            b.node("Expand", {"x", "s"}, {"y"}, "expand");
            return b;
        };
        QTest::newRow("value of 2^40 elements") << modelBytes(expand({huge})) << "" << QList<QStringList>{run}
                                                << "value 'y' float[1099511627776] of node 'expand' needs 4.00 TiB";
        QTest::newRow("Expand to 2^40 elements at run time")
            << modelBytes(expand({})) << "npy:s.npy:1099511627776"
            << QList<QStringList>{{"run", "FILE", "--input", "s=DIR/s.npy"}}
            << "node 'expand' (Expand) failed: not enough memory: can't allocate memory";
        QTest::newRow("Expand past 2^62 elements at run time")
            << modelBytes(expand({})) << "npy:s.npy:4611686018427387904"
            << QList<QStringList>{{"run", "FILE", "--input", "s=DIR/s.npy"}}
            << "node 'expand' (Expand) failed: not enough memory: Storage size calculation overflowed";
        // Model files are sized first: never read whole, whatever they hold.
        QTest::newRow("2.05 GiB model file") << QByteArray() << "sparse:model.onnx:2200000000" << everything
                                           << "is 2.05 GiB, past the 2 GiB";
        const uint64_t twiceMemory = std::min<uint64_t>(availableMemoryBytes(), uint64_t(1) << 42) * 2;
        QTest::newRow("model file twice the memory available")
            << QByteArray() << "sparse:model.onnx:" + QString::number(twiceMemory) << everything
            << "reading the whole file needs";
    }

    void resourceLimits()
    {
        QFETCH(QByteArray, model);
        QFETCH(QString, setup);
        QFETCH(QList<QStringList>, commands);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString file = dir.filePath("model.onnx");
        if (!model.isEmpty())
            QVERIFY(writeText(file, model));
        const QStringList parts = setup.split(':');
        if (parts[0] == "sparse") {
            QFile f(dir.filePath(parts[1]));
            QVERIFY2(f.open(QIODevice::ReadWrite) && f.resize(parts[2].toLongLong()), qPrintable(f.errorString()));
        } else if (parts[0] == "npy") {
            Tensor shape;
            shape.dtype = DataType::Int64;
            shape.dims = {1};
            const int64_t value = parts[2].toLongLong();
            shape.data.assign(reinterpret_cast<const char*>(&value), sizeof value);
            writeNpy(dir.filePath(parts[1]).toStdString(), shape);
        }
        if (!setup.startsWith("npy")) {  // the library refuses it as well: loading, or compiling for a run
            try {
                runtime().compile(loadOnnx(file.toStdString()));
                QFAIL("the model was accepted");
            } catch (const Error& e) {
                QVERIFY2(e.kind() == ErrorKind::Resource, e.what());
                QCOMPARE(QString::fromStdString(e.file()), file);
                QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
            }
        }
        for (QStringList args : commands) {
            args.replaceInStrings("FILE", file).replaceInStrings("DIR", dir.path());
            verifyCliError(args, file, exitCode(ErrorKind::Resource), {message});
        }
        QVERIFY(!QFile::exists(dir.filePath("out.onnx")) && !QDir(dir.filePath("code")).exists());
    }

    // A process limited to 256 MB more than it has sees at most that much.
    void availableMemoryFollowsTheAddressSpaceLimit()
    {
        const pid_t pid = ::fork();
        if (pid == 0) {
            std::ifstream status("/proc/self/status");
            std::string line;
            unsigned long long vmKb = 0;
            while (std::getline(status, line))
                if (line.rfind("VmSize:", 0) == 0)
                    vmKb = std::stoull(line.substr(7));
            const rlimit limit{rlim_t(vmKb * 1024 + (256 << 20)), RLIM_INFINITY};
            if (vmKb == 0 || ::setrlimit(RLIMIT_AS, &limit) != 0)
                ::_exit(3);
            if (availableMemoryBytes() > (uint64_t(256) << 20))
                ::_exit(1);
            try {
                requireMemory("m.onnx", "a tensor", uint64_t(1) << 30);
            } catch (const Error& e) {
                ::_exit(e.kind() == ErrorKind::Resource ? 0 : 2);
            }
            ::_exit(2);
        }
        int status = 0;
        QCOMPARE(::waitpid(pid, &status, 0), pid);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
    }

    // A complex output prints and saves (NumPy's complex128); a type .npy lacks is
    // refused before the run, nothing printed.
    void outputTypes()
    {
        QTemporaryDir dir;
        OnnxBuilder complex(13);
        complex.input("x", {2, 3}, onnx::TensorProto::COMPLEX128).output("y", {2, 3}, onnx::TensorProto::COMPLEX128);
        complex.node("Identity", {"x"}, {"y"}, "id");
        const QString file = dir.filePath("complex.onnx");
        QVERIFY(writeText(file, modelBytes(complex)));
        const auto r = test::runCli({"run", file, "--save-outputs", dir.filePath("saved")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("  y  complex128[2x3]  first ["), qPrintable(r.out));
        const Tensor saved = readNpy(dir.filePath("saved/y.npy").toStdString());
        QCOMPARE(saved.dtype, DataType::Complex128);
        QCOMPARE(saved.data.size(), size_t(96));

        OnnxBuilder bf16(13);
        bf16.input("x", {2, 3}).output("y", {2, 3}, onnx::TensorProto::BFLOAT16);
        auto& cast = bf16.node("Cast", {"x"}, {"y"}, "cast");
        OnnxBuilder::setInt(cast, "to", onnx::TensorProto::BFLOAT16);
        const QString bfile = dir.filePath("bf16.onnx");
        QVERIFY(writeText(bfile, modelBytes(bf16)));
        verifyCliError({"run", bfile, "--save-outputs", dir.filePath("bf")}, bfile, exitCode(ErrorKind::Unsupported),
                       {"output 'y' is bfloat16, which a .npy file cannot hold"});
        QVERIFY(!QDir(dir.filePath("bf")).exists());
        QCOMPARE(test::runCli({"run", bfile}).exitCode, 0);
    }

    // SIGINT, SIGTERM or SIGHUP just before a finished temporary would replace its
    // target (the LD_PRELOAD shim raises it in rename()): the process ends by the
    // signal, the old files are intact and no temporary is left.
    void interruptedWritesLeaveNothing_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<int>("signal");
        for (const char* c : {"optimize", "export", "run"})
            for (const auto& [name, sig] : {std::pair{"SIGINT", SIGINT}, {"SIGTERM", SIGTERM}, {"SIGHUP", SIGHUP}})
                QTest::newRow(qPrintable(QString("%1 %2").arg(c, name))) << QString(c) << sig;
    }

    void interruptedWritesLeaveNothing()
    {
        QFETCH(QString, command);
        QFETCH(int, signal);
        QTemporaryDir dir;
        const WriteCommand c = writeCommand(command, dir.path());
        for (const QString& f : c.files)
            QVERIFY(writeText(dir.filePath(f), "old " + f.toUtf8()));
        const CliRun r = runCliWith(c.args, {{"LD_PRELOAD", RAMIEL_RAISE_ON_RENAME},
                                             {"RAMIEL_TEST_RAISE_ON_RENAME", QString::number(signal)}});
        QVERIFY2(r.status == QProcess::CrashExit && r.code == signal,
                 qPrintable(QString("status %1, code %2: %3").arg(int(r.status)).arg(r.code).arg(r.err)));
        QCOMPARE(entries(dir.path()), c.files);
        for (const QString& f : c.files)
            QCOMPARE(readText(dir.filePath(f)), "old " + f.toUtf8());
    }

    // The same through the library, as Ramiel Studio's exports write: a signal
    // mid-write removes the temporary, then ends the process as it would have.
    void interruptedLibraryWrite_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGINT") << SIGINT;
        QTest::newRow("SIGTERM") << SIGTERM;
        QTest::newRow("SIGHUP") << SIGHUP;
    }

    void interruptedLibraryWrite()
    {
        QFETCH(int, signal);
        QTemporaryDir dir;
        const QString target = dir.filePath("file.bin");
        QVERIFY(writeText(target, "old"));
        const pid_t pid = ::fork();
        if (pid == 0) {
            for (int sig : {SIGINT, SIGTERM, SIGHUP})  // as in the CLI and Studio: Qt Test's handlers are its own
                ::signal(sig, SIG_DFL);
            AtomicFile f(target.toStdString());
            f.write("partial");
            ::raise(signal);
            ::_exit(99);
        }
        int status = 0;
        QCOMPARE(::waitpid(pid, &status, 0), pid);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == signal, qPrintable(QString::number(status)));
        QCOMPARE(entries(dir.path()), QStringList{"file.bin"});
        QCOMPARE(readText(target), QByteArray("old"));
    }

    // Temporaries of a run killed outright (SIGKILL) are removed by the next write to
    // the same target; a running process's, and other files, are left alone.
    void staleTemporariesAreSwept_data() { addWriteCommandRows(); }

    void staleTemporariesAreSwept()
    {
        QFETCH(QString, command);
        QTemporaryDir dir;
        const WriteCommand c = writeCommand(command, dir.path());
        const QString dead = QString::number(deadPid()), alive = QString::number(::getpid());
        QStringList kept = c.files;
        for (const QString& f : c.files) {
            QVERIFY(writeText(dir.filePath("." + f + ".ramiel-" + dead + "-a1B2c3"), "stale"));
            for (const QString& other : {"." + f + ".ramiel-" + alive + "-a1B2c3", "." + f + ".other",
                                         "." + f + ".ramiel-" + dead + "-a1B2c3d"})
                QVERIFY(writeText(dir.filePath(other), "keep"));
            kept << "." + f + ".ramiel-" + alive + "-a1B2c3" << "." + f + ".other"
                 << "." + f + ".ramiel-" + dead + "-a1B2c3d";
        }
        const CliRun r = runCliWith(c.args);
        QVERIFY2(r.status == QProcess::NormalExit && r.code == 0, qPrintable(r.err));
        kept.sort();
        QCOMPARE(entries(dir.path()), kept);
    }

    // New files follow the umask; a replaced file keeps its mode.
    void fileModes_data() { addWriteCommandRows(); }

    void fileModes()
    {
        QFETCH(QString, command);
        QTemporaryDir fresh, existing;
        const WriteCommand c = writeCommand(command, fresh.path());
        const CliRun r = runCliWith(c.args, {}, 077);
        QVERIFY2(r.status == QProcess::NormalExit && r.code == 0, qPrintable(r.err));
        for (const QString& f : c.files)
            QCOMPARE(permissionBits(fresh.filePath(f)), 0600u);

        const WriteCommand again = writeCommand(command, existing.path());
        for (const QString& f : again.files) {
            QVERIFY(writeText(existing.filePath(f), "old"));
            QVERIFY(::chmod(existing.filePath(f).toLocal8Bit().constData(), 0640) == 0);
        }
        const CliRun r2 = runCliWith(again.args, {}, 022);
        QVERIFY2(r2.status == QProcess::NormalExit && r2.code == 0, qPrintable(r2.err));
        for (const QString& f : again.files) {
            QCOMPARE(permissionBits(existing.filePath(f)), 0640u);
            QVERIFY(readText(existing.filePath(f)) != "old");
        }
    }

    // A read-only folder: exit code 3, one line naming the file, nothing on stdout,
    // the files there untouched (as root too: the CLI runs without CAP_DAC_OVERRIDE).
    void readOnlyFolder_data() { addWriteCommandRows(); }

    void readOnlyFolder()
    {
        QFETCH(QString, command);
        QTemporaryDir dir;
        const QString ro = dir.filePath("ro");
        QVERIFY(QDir().mkdir(ro));
        const WriteCommand c = writeCommand(command, ro);
        for (const QString& f : c.files)
            QVERIFY(writeText(ro + "/" + f, "old"));
        QVERIFY(::chmod(ro.toLocal8Bit().constData(), 0555) == 0);
        const CliRun r = runCliWith(c.args, {}, -1, true);
        QVERIFY(::chmod(ro.toLocal8Bit().constData(), 0755) == 0);
        ++cliErrorChecks;
        QVERIFY2(r.status == QProcess::NormalExit && r.code == exitCode(ErrorKind::Io), qPrintable(r.err));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
        const QStringList lines = r.err.trimmed().split('\n');
        QVERIFY2(lines.size() == 1 && lines[0].startsWith("ramiel: error: " + ro + "/") &&
                     lines[0].contains("cannot create a file in " + ro + ": Permission denied"),
                 qPrintable(r.err));
        QCOMPARE(entries(ro), c.files);
        for (const QString& f : c.files)
            QCOMPARE(readText(ro + "/" + f), QByteArray("old"));
    }

    // A symbolic link stays a link (the file it names is replaced); a FIFO or device
    // (/dev/null, /dev/stdout) is written in place, never replaced; a folder is refused.
    void writeTargets()
    {
        QTemporaryDir dir;
        const QString real = dir.filePath("real.txt"), link = dir.filePath("link.txt");
        QVERIFY(writeText(real, "old"));
        QVERIFY(QFile::link("real.txt", link));
        writeFileAtomically(link.toStdString(), "new");
        QVERIFY(QFileInfo(link).isSymLink());
        QCOMPARE(readText(real), QByteArray("new"));

        const QString fifo = dir.filePath("fifo");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        const int reader = ::open(fifo.toLocal8Bit().constData(), O_RDONLY | O_NONBLOCK);
        QVERIFY(reader >= 0);
        writeFileAtomically(fifo.toStdString(), "through");
        char buffer[16] = {};
        QCOMPARE(::read(reader, buffer, sizeof buffer), ssize_t(7));
        ::close(reader);
        QCOMPARE(QByteArray(buffer), QByteArray("through"));
        QVERIFY(QFileInfo(fifo).exists() && !QFileInfo(fifo).isFile());
        QCOMPARE(entries(dir.path()), (QStringList{"fifo", "link.txt", "real.txt"}));

        try {
            writeFileAtomically(dir.path().toStdString(), "x");
            QFAIL("wrote over a folder");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Io);
            QVERIFY2(QString(e.what()).contains("is a folder"), e.what());
        }
    }

    void cleanupTestCase()
    {
        qInfo("generated corpus: %d cases, %d refused cleanly by the pass pipeline and the runtime, %d CLI runs "
              "(exit code 5, one line); a crash would have ended this test",
              corpusCases_, corpusRefused_, cliRuns_);
        qInfo("CLI errors checked (documented exit code, one line on stderr, nothing on stdout): %d", cliErrorChecks);
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
