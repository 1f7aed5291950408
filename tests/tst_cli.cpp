// The ramiel CLI end to end: info (text and JSON), calibrate, help, version.
#include "core/passes/registry.h"
#include "core/util/npy.h"
#include "core/util/version.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sched.h>

using namespace ramiel;

namespace {

const QString kMachine = test::sourcePath("tests/data/machine.json");

// The CPUs this process may run on, in order.
QList<int> allowedCpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    QList<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set))
                cpus.push_back(c);
    return cpus;
}

// A "host" object of a timing report (docs/json.md): the CPUs this test may use,
// and a round trip between the first two of them where there are two.
void checkHost(const QJsonObject& h, const QList<int>& cpus)
{
    QCOMPARE(h["cpus"].toInt(), int(cpus.size()));
    QVERIFY(h["load_average"].toDouble(-1) >= 0);
    if (cpus.size() < 2) {
        QVERIFY(h["round_trip_ns"].isNull());
        QVERIFY(h["round_trip_cpus"].isNull());
        return;
    }
    // A cache line to another core and back: more than a few nanoseconds, at most a trial's 20 ms.
    const double ns = h["round_trip_ns"].toDouble();
    QVERIFY2(ns > 5 && ns <= 2e7, qPrintable(QString::number(ns)));
    QCOMPARE(h["round_trip_cpus"].toArray(), QJsonArray({cpus[0], cpus[1]}));
}

QJsonObject infoJson(const QString& model, QStringList extra = {})
{
    const auto r = test::runCli(QStringList{"info", model, "--json", "--machine", kMachine} + extra);
    if (r.exitCode != 0)
        qWarning("%s", qPrintable(r.err));
    return QJsonDocument::fromJson(r.out.toUtf8()).object();
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private:
    QTemporaryDir work_;

    // A valid model with an operator the runtime lacks (Det).
    QString unsupportedModel()
    {
        const QString file = work_.filePath("max_roi_pool.onnx");
        test::OnnxBuilder b;
        b.input("x", {1, 2, 4, 4}).input("rois", {3, 5}).output("y");
        test::OnnxBuilder::setInts(b.node("MaxRoiPool", {"x", "rois"}, {"y"}, "the_pool"), "pooled_shape", {2, 2});
        const std::string bytes = b.bytes();
        QFile f(file);
        if (!f.open(QIODevice::WriteOnly) || f.write(bytes.data(), qint64(bytes.size())) != qint64(bytes.size()))
            qFatal("cannot write %s", qPrintable(file));
        return file;
    }

private Q_SLOTS:
    void version()
    {
        const auto r = test::runCli({"--version"});
        QCOMPARE(r.exitCode, 0);
        // Ramiel's version, then the libraries' as found at configure time (the runtime
        // module reports libtorch's and the OpenMP runtime its calls reach: LLVM's, which
        // the CLI links ahead of libgomp; Graphviz's is the loaded library's own).
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0], QString("ramiel ") + kVersion);
        QCOMPARE(lines[1], QString(RAMIEL_EXPECTED_LIBRARIES));
        QVERIFY(QRegularExpression("^ONNX \\d+\\.\\d+\\.\\d+, Graphviz \\d+\\.\\d+\\.\\d+, libtorch \\d+\\.\\d+\\.\\d+, "
                                   "OpenMP libomp\\.so\\.\\d+$")
                    .match(lines[1])
                    .hasMatch());
    }

    void help()
    {
        const auto r = test::runCli({"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("info"));
        QVERIFY(r.out.contains("calibrate"));
        const auto sub = test::runCli({"info", "--help"});
        QCOMPARE(sub.exitCode, 0);
        QVERIFY(sub.out.contains("--shape"));
        QVERIFY(sub.out.contains("--json"));
    }

    // The graph as read (--passes none).
    void infoJsonOnSample()
    {
        const QJsonObject j =
            infoJson(test::sourcePath("resources/models/inception_sample.onnx"), {"--passes", "none"});
        QCOMPARE(j["schema"].toString(), QString("ramiel.info/1"));
        QCOMPARE(j["passes"].toArray(), QJsonArray());
        QCOMPARE(j["nodes_as_read"].toInt(), 74);
        QCOMPARE(j["nodes"].toInt(), 74);
        QCOMPARE(j["edges"].toInt(), 79);
        QCOMPARE(j["depth"].toInt(), 26);
        QCOMPARE(j["width"].toInt(), 4);
        QCOMPARE(j["op_histogram"].toObject()["Conv"].toInt(), 33);
        QCOMPARE(j["op_histogram"].toObject()["Concat"].toInt(), 2);
        QVERIFY(j["costs_complete"].toBool());
        QCOMPARE(j["unknown_costs"].toString(), QString("none"));
        const QJsonArray path = j["critical_path"].toArray();
        QVERIFY(path.size() > 2);
        QCOMPARE(path.first().toString(), QString("stem/Conv"));
        QCOMPARE(path.last().toString(), QString("head/Gemm"));
        const double work = j["work"].toDouble(), span = j["span"].toDouble();
        QVERIFY(work > 0 && span > 0 && span <= work);
        QCOMPARE(j["parallelism"].toDouble(), work / span);
        QCOMPARE(j["critical_path_length"].toDouble(), span);
        QCOMPARE(j["cost_model"].toObject()["flops_per_second"].toDouble(), 5e10);
        QCOMPARE(j["cost_model"].toObject()["source"].toString(), kMachine);
        QCOMPARE(j["inputs"].toArray()[0].toObject()["shape"].toArray().size(), 4);
        QVERIFY(j["warnings"].toArray().isEmpty());
    }

    void infoText()
    {
        const auto r = test::runCli({"info", test::sourcePath("resources/models/inception_sample.onnx"), "--machine",
                                     kMachine, "--nodes", "--passes", "none"});
        QCOMPARE(r.exitCode, 0);
        for (const char* s : {"prepared      with no passes: the graph as read", "74 nodes", "critical path", "parallelism", "work T1",
                              "span T-inf", "block1/Concat"})
            QVERIFY2(r.out.contains(s), s);
    }

    // Every command starts from the passes Studio starts from (pipeline::kDefaultPasses), and info
    // says which ran: the sample's batch normalizations and activations fold into its convolutions.
    void infoRunsTheDefaultPasses()
    {
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        const QJsonObject j = infoJson(sample);
        QStringList ran;
        for (const auto& name : j["passes"].toArray())
            ran << name.toString();
        const auto listed = test::runCli({"optimize", "--list-passes"});
        QCOMPARE(listed.exitCode, 0);
        QStringList onByDefault;
        for (const QString& line : listed.out.split('\n'))
            if (line.section(' ', 1).trimmed().startsWith("on "))
                onByDefault << line.section(' ', 0, 0);
        QVERIFY(!onByDefault.isEmpty());
        QCOMPARE(ran, onByDefault);
        QCOMPARE(j["nodes_as_read"].toInt(), 74);
        QCOMPARE(j["nodes"].toInt(), 40);
        QCOMPARE(j["op_histogram"].toObject()["Conv"].toInt(), 0);
        QVERIFY(j["op_histogram"].toObject()["ai.ramiel.FusedConv"].toInt() > 0);
        const auto text = test::runCli({"info", sample, "--machine", kMachine});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains(QString("the default passes (%1: ramiel optimize --list-passes)").arg(onByDefault.size())), qPrintable(text.out));
        QVERIFY2(text.out.contains("74 nodes as read") && text.out.contains("40 nodes,"), qPrintable(text.out));
    }

    // Acceptance: inception_v3 reports 316 nodes and a critical path (as read: --passes none).
    void infoInceptionV3()
    {
        QElapsedTimer timer;
        timer.start();
        const QJsonObject j = infoJson(test::modelPath("inception_v3"), {"--passes", "none"});
        qInfo("ramiel info inception_v3 --json: %lld ms (process start to exit)", timer.elapsed());
        QCOMPARE(j["nodes"].toInt(), 316);
        QVERIFY(j["critical_path"].toArray().size() > 10);
        QVERIFY(j["costs_complete"].toBool());
        // FLOP-weighted parallelism of inception_v3 is about 1.5 (docs/metrics.md, Against an independent estimate).
        const double p = j["parallelism"].toDouble();
        QVERIFY2(p > 1.2 && p < 2.0, qPrintable(QString::number(p)));
    }

    // --shape reaches the importer: the same sizes change nothing, batch 4 costs 4x.
    void shapeOverrideChangesCosts()
    {
        const QJsonObject j = infoJson(test::sourcePath("resources/models/inception_sample.onnx"),
                                       {"--shape", "image=1,3,80,80"});
        QCOMPARE(j["nodes_as_read"].toInt(), 74);
        const QJsonObject bigger = infoJson(test::sourcePath("resources/models/inception_sample.onnx"),
                                            {"--shape", "image=4,3,80,80"});
        QVERIFY(bigger["flops"].toDouble() > 3.9 * j["flops"].toDouble());
    }

    // A model exported with a symbolic batch: the commands that plan and run read
    // one sample (info says so) and -b counts samples, bench's own processes too;
    // optimize writes the batch back symbolic.
    void symbolicBatchIsOneSample()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("dynamic_batch.onnx");
        QVERIFY(test::writeModel(test::symbolicBatchConvModel(), path.toStdString()));
        const auto info = test::runCli({"info", path, "--machine", kMachine});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.out.contains("float[1x3x16x16]  (one sample: the file's batch 'batch' is symbolic"),
                 qPrintable(info.out));
        QVERIFY2(!info.out.contains("warning"), qPrintable(info.out));
        const QJsonObject j = infoJson(path);
        QCOMPARE(j["inputs"].toArray()[0].toObject()["symbolic_batch"].toString(), QString("batch"));

        const auto run = test::runCli({"run", path, "-b", "3"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains("  y  float[3x4x16x16]"), qPrintable(run.out));
        const auto bench = test::runCli({"bench", path, "-p", "2", "-b", "2", "--runs", "2", "--json", "--machine", kMachine});
        QVERIFY2(bench.exitCode == 0, qPrintable(bench.err));
        QCOMPARE(QJsonDocument::fromJson(bench.out.toUtf8()).object()["batch"].toInt(), 2);

        const QString optimized = dir.filePath("optimized.onnx");
        const auto opt = test::runCli({"optimize", path, "-o", optimized});
        QVERIFY2(opt.exitCode == 0, qPrintable(opt.err));
        QVERIFY2(infoJson(optimized)["inputs"].toArray()[0].toObject()["symbolic_batch"].toString() == "batch",
                 "optimize kept the file's symbolic batch");
        // --shape still decides.
        const QJsonObject sized = infoJson(path, {"--shape", "x=5,3,16,16"});
        QCOMPARE(sized["inputs"].toArray()[0].toObject()["shape"].toArray()[0].toInt(), 5);
        QVERIFY(!sized["inputs"].toArray()[0].toObject().contains("symbolic_batch"));
    }

    // Nodes without a static cost: info and cluster say which, that the simulated figures
    // count them 0, and what gives them a cost: the inputs' sizes, or, where the sizes
    // depend on the data (after NonZero) or shape inference knows no sizes (an operator of
    // another domain), a measured profile, with which cluster is quiet.
    void unknownCostsSayWhatToDo_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("why");
        QTest::addColumn<QString>("remedy");
        QTest::newRow("sizes depend on the data") << "nonzero" << "data_dependent"
                                                  << "their sizes depend on the data: 'ramiel profile'";
        QTest::newRow("input sizes open") << "open input" << "input_sizes" << "give them with --shape";
        QTest::newRow("operator shape inference does not know")
            << "other domain" << "not_inferred" << "shape inference could not size them: where the model runs";
    }
    void unknownCostsSayWhatToDo()
    {
        QFETCH(QString, model);
        QFETCH(QString, why);
        QFETCH(QString, remedy);
        QTemporaryDir dir;
        const QString path = dir.filePath("unsized.onnx");
        if (model == "other domain") {
            test::OnnxBuilder b;
            b.input("x", {1, 8}).output("y");
            b.node("Frobnicate", {"x"}, {"y"}, "frobnicate").set_domain("com.example");
            auto* opset = b.model().add_opset_import();
            opset->set_domain("com.example");
            opset->set_version(1);
            QVERIFY(test::writeModel(b, path.toStdString()));
        } else {
            QVERIFY(test::writeModel(test::dataDependentSizesModel(model == "nonzero"), path.toStdString()));
        }
        const auto info = test::runCli({"info", path, "--machine", kMachine});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.out.contains("unknown cost") && info.out.contains(remedy), qPrintable(info.out));
        QCOMPARE(infoJson(path)["unknown_costs"].toString(), why);
        const auto cluster = test::runCli({"cluster", path, "-p", "2", "--machine", kMachine});
        QCOMPARE(cluster.exitCode, 0);
        QVERIFY2(cluster.err.contains("have no static cost") && cluster.err.contains("count 0 in the simulated figures") &&
                     cluster.err.contains(remedy),
                 qPrintable(cluster.err));
        if (model != "nonzero")
            return;
        const QString costs = dir.filePath("costs.json");
        const auto profile = test::runCli({"profile", path, "--runs", "3", "-o", costs});
        QVERIFY2(profile.exitCode == 0, qPrintable(profile.err));
        const auto measured = test::runCli({"cluster", path, "-p", "2", "--costs", costs, "--machine", kMachine});
        QCOMPARE(measured.exitCode, 0);
        QVERIFY2(!measured.err.contains("warning"), qPrintable(measured.err));
    }

    // calibrate measures real constants, writes them, and info uses them;
    // without --machine, info calibrates once and caches for this CPU.
    void calibrateAndCache()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath("m.json");
        const auto r = test::runCli({"calibrate", "-o", file, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject c = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(c["flops_per_second"].toDouble() > 1e8);
        QVERIFY(c["bytes_per_second"].toDouble() > 1e7);
        QVERIFY(c["overhead_seconds"].toDouble() > 0);
        checkHost(c["host"].toObject(), allowedCpus());
        QVERIFY(QFile::exists(file));
        const auto info = test::runCli({"info", test::sourcePath("resources/models/inception_sample.onnx"),
                                        "--json", "--machine", file});
        QCOMPARE(info.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(info.out.toUtf8()).object()["cost_model"].toObject()["flops_per_second"]
                     .toDouble(),
                 c["flops_per_second"].toDouble());

        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("RAMIEL_CACHE_DIR", dir.filePath("cache"));
        p.setProcessEnvironment(env);
        p.start(test::cliPath(), {"info", test::sourcePath("resources/models/inception_sample.onnx"), "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFile::exists(dir.filePath("cache/machine-v2.json")));
    }

    // The CLI restarts itself with huge pages for its heap (core/util/huge_pages.h): added to a
    // GLIBC_TUNABLES of the user's own, which keeps its settings; one that names
    // glibc.malloc.hugetlb already is left as it is. Read from /proc while `profile` runs.
    void hugePagesJoinTheUsersTunables_data()
    {
        QTest::addColumn<QString>("own");       // empty: unset
        QTest::addColumn<QString>("expected");  // the running process's GLIBC_TUNABLES
        QTest::newRow("unset") << "" << "glibc.malloc.hugetlb=1";
        QTest::newRow("another setting") << "glibc.malloc.tcache_count=7"
                                         << "glibc.malloc.tcache_count=7:glibc.malloc.hugetlb=1";
        QTest::newRow("huge pages off") << "glibc.malloc.hugetlb=0" << "glibc.malloc.hugetlb=0";
    }
    void hugePagesJoinTheUsersTunables()
    {
        QFETCH(QString, own);
        QFETCH(QString, expected);
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("GLIBC_TUNABLES");
        if (!own.isEmpty())
            env.insert("GLIBC_TUNABLES", own);
        p.setProcessEnvironment(env);
        QTemporaryDir dir;
        p.start(test::cliPath(), {"profile", test::sourcePath("resources/models/inception_sample.onnx"), "--runs",
                                  "1000000", "-o", dir.filePath("profile.json")});
        QVERIFY(p.waitForStarted());
        // The restart comes first thing in main(); the model's runs start after libtorch loads.
        QString tunables;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 1500 && p.state() == QProcess::Running) {
            // glibc ends each tunable's value in place with a NUL as it reads them: the ones after
            // the first follow GLIBC_TUNABLES=... as entries of their own.
            QFile environ(QString("/proc/%1/environ").arg(p.processId()));
            if (environ.open(QIODevice::ReadOnly)) {
                const QList<QByteArray> entries = environ.readAll().split('\0');
                for (qsizetype i = 0; i < entries.size(); ++i)
                    if (entries[i].startsWith("GLIBC_TUNABLES=")) {
                        QByteArray value = entries[i].mid(int(qstrlen("GLIBC_TUNABLES=")));
                        while (i + 1 < entries.size() && entries[i + 1].startsWith("glibc."))
                            value += ":" + entries[++i];
                        tunables = QString::fromUtf8(value);
                    }
            }
            QTest::qWait(20);
        }
        const bool ran = p.state() == QProcess::Running;
        p.kill();
        p.waitForFinished();
        QVERIFY2(ran, qPrintable(p.readAllStandardError()));
        QCOMPARE(tunables, expected);
    }

    void clusterJson()
    {
        const auto r = test::runCli({"cluster", test::sourcePath("resources/models/inception_sample.onnx"), "--json",
                                     "--machine", kMachine, "--cores", "4", "--gantt", "--passes", "none"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j["schema"].toString(), QString("ramiel.schedule/1"));
        QCOMPARE(j["algorithm"].toString(), QString("linear"));
        QVERIFY(j["valid"].toBool());
        const QJsonArray clusters = j["clusters"].toArray();
        QVERIFY(clusters.size() >= 2 && clusters.size() <= 4);
        int owned = 0;
        for (const auto& c : clusters) {
            QVERIFY(c.toObject()["load"].toDouble() > 0);
            for (const auto& i : c.toObject()["instances"].toArray())
                owned += !i.toObject()["clone"].toBool();
        }
        QCOMPARE(owned, 74);  // every node exactly once, clones aside
        QVERIFY(j["cross_edges"].toArray().size() > 0);
        const double makespan = j["makespan"].toDouble();
        QVERIFY(makespan > 0 && makespan < j["serial"].toDouble());
        QCOMPARE(j["speedup"].toDouble(), j["serial"].toDouble() / makespan);
        QVERIFY(j["speedup"].toDouble() <= j["speedup_bound"].toDouble() * (1 + 1e-9));
        QVERIFY(j["gantt"].toArray().size() >= 74);
    }

    void clusterOptions_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("expect");
        QTest::newRow("heft") << QStringList{"-a", "heft", "-p", "2"} << 0 << "heft for P = 2 (2 workers x 1 thread)";
        QTest::newRow("dsc") << QStringList{"-a", "dsc", "-p", "3"} << 0 << "dsc for P = 3 (3 workers x 1 thread)";
        QTest::newRow("serial") << QStringList{"-a", "serial"} << 0 << "speedup 1.00x";
        QTest::newRow("hyper") << QStringList{"-p", "2", "-b", "4", "-d", "2"} << 0 << "2 sub-batches";
        QTest::newRow("no clone") << QStringList{"--no-clone"} << 0 << "clones 0";
        QTest::newRow("default passes") << QStringList{} << 0 << "static costs, the default passes\n";
        QTest::newRow("no passes") << QStringList{"--passes", "none"} << 0 << "static costs, no passes\n";
        QTest::newRow("some passes") << QStringList{"--passes", "fuse-pad,dce"} << 0 << "static costs, passes dce, fuse-pad\n";
        QTest::newRow("unknown algo") << QStringList{"-a", "ios"} << 2 << "unknown algorithm 'ios'";
        QTest::newRow("degree > batch") << QStringList{"-b", "2", "-d", "4"} << 2 << "between 1 and the batch";
        QTest::newRow("zero cores") << QStringList{"-p", "0"} << 2 << "cores";
        QTest::newRow("missing costs") << QStringList{"--costs", "/nonexistent.json"} << 3 << "/nonexistent.json";
    }

    void clusterOptions()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, expect);
        const auto r = test::runCli(QStringList{"cluster", test::sourcePath("resources/models/inception_sample.onnx"),
                                                "--machine", kMachine} + args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2((r.out + r.err).contains(expect), qPrintable(r.out + r.err));
    }

    // Measured costs: a table naming every node replaces the static costs.
    void clusterWithMeasuredCosts()
    {
        const auto info = test::runCli({"info", test::sourcePath("resources/models/inception_sample.onnx"), "--json",
                                        "--machine", kMachine});
        QJsonObject nodes;
        for (const auto& n : QJsonDocument::fromJson(info.out.toUtf8()).object()["critical_path"].toArray())
            nodes[n.toString()] = 1e-3;  // only the critical path: the others keep static costs
        QTemporaryDir dir;
        QFile f(dir.filePath("costs.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(QJsonObject{{"batch", 1}, {"nodes", nodes}}).toJson());
        f.close();
        const auto r = test::runCli({"cluster", test::sourcePath("resources/models/inception_sample.onnx"), "--json",
                                     "--machine", kMachine, "--costs", f.fileName()});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("lacks"), qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j["cost_source"].toString(), f.fileName());
        QVERIFY(j["serial"].toDouble() > nodes.size() * 1e-3);
    }

    // Acceptance: every algorithm's makespan side by side on inception_v3.
    void compareInceptionV3()
    {
        const auto r = test::runCli({"compare", test::modelPath("inception_v3"), "--cores", "4", "--machine", kMachine});
        QCOMPARE(r.exitCode, 0);
        for (const char* a : {"linear", "dsc", "heft", "serial"})
            QVERIFY2(r.out.contains(QString("  ") + a + " "), qPrintable(r.out));
        qInfo("%s", qPrintable(r.out));
        const auto j = test::runCli({"compare", test::modelPath("inception_v3"), "--cores", "4", "--machine", kMachine,
                                     "--json"});
        const QJsonArray rows = QJsonDocument::fromJson(j.out.toUtf8()).object()["algorithms"].toArray();
        QCOMPARE(rows.size(), 4);
        for (const auto& row : rows)
            QVERIFY(row.toObject()["valid"].toBool());
    }

    // run: outputs as .npy that read back to what was printed; inputs from .npy.
    void runSavesOutputs()
    {
        QTemporaryDir dir;
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        const auto r = test::runCli({"run", sample, "--save-outputs", dir.filePath("out"), "--seed", "5"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("logits  float[1x10]"), qPrintable(r.out));
        const Tensor out = readNpy(dir.filePath("out/logits.npy").toStdString());
        QCOMPARE(out.dims, (std::vector<int64_t>{1, 10}));
        // The same run again gives the same bytes (seeded inputs, deterministic kernels).
        const auto again = test::runCli({"run", sample, "--save-outputs", dir.filePath("again"), "--seed", "5"});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(readNpy(dir.filePath("again/logits.npy").toStdString()).data, out.data);
        // A batch of 3 from a file.
        Tensor image;
        image.dtype = DataType::Float;
        image.dims = {3, 3, 80, 80};
        image.data.assign(size_t(3 * 3 * 80 * 80 * 4), '\0');
        writeNpy(dir.filePath("image.npy").toStdString(), image);
        const auto batch = test::runCli({"run", sample, "--input", "image=" + dir.filePath("image.npy")});
        QCOMPARE(batch.exitCode, 0);
        QVERIFY2(batch.out.contains("float[3x10]"), qPrintable(batch.out));
    }

    // ScatterND's reductions run on ATen functions that warn they are in beta: the notice,
    // and glog's header before it, say nothing about the model and stay out of the output.
    void runPrintsNoLibtorchNotices()
    {
        test::OnnxBuilder b(16);
        b.input("data", {4, 3}).initializerInt64("indices", {1, 1}, {2, 1}).initializer("updates", {2, 3}, 2.0f);
        b.output("y", {4, 3});
        test::OnnxBuilder::setString(b.node("ScatterND", {"data", "indices", "updates"}, {"y"}), "reduction", "mul");
        const QString file = work_.filePath("scatter_nd_mul.onnx");
        QVERIFY(test::writeModel(b, file.toStdString()));
        const auto r = test::runCli({"run", file});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("y  float[4x3]"), qPrintable(r.out));
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    }

    // An output the run gives otherwise than the model declares it: a warning after the
    // summary (ONNX's shape inference stops at such a node, so only the run tells), none
    // where the inputs themselves were not fed as declared.
    void runWarnsWhereOutputsContradictDeclarations_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QList<qint64>>("declared");
        QTest::addColumn<int>("declaredType");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("warning");
        const int f = onnx::TensorProto::FLOAT;
        QTest::newRow("size") << "Relu" << QList<qint64>{4, 3} << f << QStringList{}
                              << "output 'y' is declared float[4x3]; the run gave float[4x4]";
        QTest::newRow("rank") << "Relu" << QList<qint64>{16} << f << QStringList{}
                              << "output 'y' is declared float[16]; the run gave float[4x4]";
        QTest::newRow("element type") << "Relu" << QList<qint64>{4, 4} << int(onnx::TensorProto::INT64) << QStringList{}
                                      << "output 'y' is declared int64[4x4]; the run gave float[4x4]";
        QTest::newRow("data-dependent size") << "Reshape" << QList<qint64>{2, 8} << f << QStringList{"shape=4,4"}
                                             << "output 'y' is declared float[2x8]; the run gave float[4x4]";
        QTest::newRow("as declared") << "Reshape" << QList<qint64>{2, 8} << f << QStringList{"shape=2,8"} << "";
        QTest::newRow("unknown size") << "Reshape" << QList<qint64>{-1, 8} << f << QStringList{"shape=2,8"} << "";
        QTest::newRow("input not as declared") << "Relu" << QList<qint64>{4, 3} << f << QStringList{"x=8,4"} << "";
    }

    void runWarnsWhereOutputsContradictDeclarations()
    {
        QFETCH(QString, op);
        QFETCH(QList<qint64>, declared);
        QFETCH(int, declaredType);
        QFETCH(QStringList, extra);
        QFETCH(QString, warning);
        test::OnnxBuilder b;
        b.input("x", {4, 4});
        if (op == "Reshape") {
            b.input("shape", {2}, onnx::TensorProto::INT64);
            b.node("Reshape", {"x", "shape"}, {"y"});
        } else {
            b.node(op.toStdString(), {"x"}, {"y"});
        }
        b.output("y", std::vector<int64_t>(declared.begin(), declared.end()), onnx::TensorProto::DataType(declaredType));
        const QString file = work_.filePath(QString("declared_%1.onnx").arg(QTest::currentDataTag()).replace(' ', '_'));
        QVERIFY(test::writeModel(b, file.toStdString()));
        QStringList args{"run", file};
        for (const QString& spec : extra) {  // NAME=d1,d2: an input of those sizes (int64 ones hold them)
            const QString name = spec.section('=', 0, 0);
            Tensor t;
            for (const QString& d : spec.section('=', 1).split(','))
                t.dims.push_back(d.toLongLong());
            t.dtype = name == "shape" ? DataType::Int64 : DataType::Float;
            if (name == "shape") {
                const std::vector<int64_t> values = t.dims;
                t.dims = {int64_t(values.size())};
                t.data.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
            } else {
                t.data.assign(size_t(t.numel() * 4), '\0');
            }
            const QString npy = work_.filePath(QString("%1_%2.npy").arg(QTest::currentDataTag(), name).replace(' ', '_'));
            writeNpy(npy.toStdString(), t);
            args << "--input" << name + "=" + npy;
        }
        const auto r = test::runCli(args);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("y  float["), qPrintable(r.out));
        if (warning.isEmpty())
            QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        else
            QCOMPARE(r.err.trimmed(), "ramiel: warning: " + file + ": " + warning);
    }

    void runErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        QTest::newRow("unknown input") << QStringList{"run", sample, "--input", "nope=x.npy"} << 2 << "not a graph input";
        QTest::newRow("profile, unknown input") << QStringList{"profile", sample, "--input", "nope=x.npy", "-o", "/tmp/x.json"}
                                                << 2 << "not a graph input";
        QTest::newRow("profile, missing npy") << QStringList{"profile", sample, "--input", "image=/nonexistent.npy", "-o",
                                                             "/tmp/x.json"}
                                              << 3 << "/nonexistent.npy";
        QTest::newRow("missing npy") << QStringList{"run", sample, "--input", "image=/nonexistent.npy"} << 3 << "/nonexistent.npy";
        QTest::newRow("bench, missing npy") << QStringList{"bench", sample, "--input", "image=/nonexistent.npy", "--runs", "1"}
                                            << 3 << "/nonexistent.npy";
        QTest::newRow("tune, unknown input") << QStringList{"tune", sample, "--input", "nope=x.npy", "--budget", "5"} << 2
                                             << "not a graph input";
        QTest::newRow("input without a file") << QStringList{"bench", sample, "--input", "image="} << 2
                                              << "--input takes NAME=FILE.npy, got 'image='";
        QTest::newRow("not npy") << QStringList{"run", sample, "--input", "image=" + sample} << 2 << "not a NumPy .npy file";
        QTest::newRow("unsupported op") << QStringList{"run", unsupportedModel()} << 7 << "MaxRoiPool (node 'the_pool')";
        // Invalid and unsupported: the node checks come first.
        QTest::newRow("invalid node") << QStringList{"run", test::sourcePath("tests/data/bad/scan_missing_attribute.onnx")}
                                      << 5 << "node 'Scan_0' (Scan): lacks the required attribute 'num_scan_inputs'";
        QTest::newRow("unwritable output") << QStringList{"run", sample, "--save-outputs", "/proc/ramiel-no"} << 3
                                           << "/proc/ramiel-no";
    }

    void runErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const auto r = test::runCli(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    // profile writes the table cluster --costs reads (also on inputs from a file, as a
    // detector's data-dependent nodes want); bench --json has its documented keys.
    void profileAndBench()
    {
        QTemporaryDir dir;
        const QString sample = test::sourcePath("resources/models/inception_sample.onnx");
        const QString costs = dir.filePath("costs.json");
        Tensor image;
        image.dtype = DataType::Float;
        image.dims = {2, 3, 80, 80};
        image.data.assign(size_t(2 * 3 * 80 * 80 * 4), '\0');
        writeNpy(dir.filePath("image.npy").toStdString(), image);
        const auto onFile = test::runCli({"profile", sample, "--input", "image=" + dir.filePath("image.npy"), "-b", "2",
                                          "-o", dir.filePath("file_costs.json"), "--runs", "2"});
        QCOMPARE(onFile.exitCode, 0);
        QVERIFY2(onFile.out.contains("batch 2"), qPrintable(onFile.out));
        const auto p = test::runCli({"profile", sample, "-o", costs, "--runs", "3"});
        QCOMPARE(p.exitCode, 0);
        QVERIFY2(p.out.contains("\n  host: "), qPrintable(p.out));
        {
            QFile f(costs);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QJsonObject table = QJsonDocument::fromJson(f.readAll()).object();
            checkHost(table["host"]["before"].toObject(), allowedCpus());
            checkHost(table["host"]["after"].toObject(), allowedCpus());
        }
        const auto c = test::runCli({"cluster", sample, "--costs", costs, "--machine", kMachine, "--json"});
        QCOMPARE(c.exitCode, 0);
        QVERIFY2(!c.err.contains("lacks"), qPrintable(c.err));  // every node was measured
        const auto b = test::runCli({"bench", sample, "-p", "2", "--runs", "3", "--json", "--machine", kMachine});
        QCOMPARE(b.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(b.out.toUtf8()).object();
        const QJsonArray runs = j["runs"].toArray();
        QCOMPARE(j["isolation"].toString(), QString("own process"));  // each configuration timed alone
        QJsonArray defaults;
        for (const std::string& name : passes::parsePassList("default"))
            defaults.append(QString::fromStdString(name));
        QCOMPARE(j["passes"].toArray(), defaults);  // what ran before the timing, as info says
        const QJsonObject host = j["host"].toObject();
        checkHost(host["before"].toObject(), allowedCpus());
        checkHost(host["after"].toObject(), allowedCpus());
        if (QFile::exists("/proc/stat"))  // Linux: a share of the CPUs' time, 0 on a host of its own
            QVERIFY(host["stolen_share"].toDouble(-1) >= 0 && host["stolen_share"].toDouble() <= 1);
        // The hybrid row is there exactly when the hybrid changed the schedule (measured
        // costs decide, so either can happen on the sample).
        const QJsonObject hybrid = j["hybrid"].toObject();
        QVERIFY(hybrid.contains("threaded_instances"));
        QVERIFY(hybrid.contains("simulated_before_ms") && hybrid.contains("simulated_after_ms"));  // bench's unit
        const bool hybridRan = hybrid["threaded_instances"].toInt() > 0;
        QCOMPARE(runs.size(), hybridRan ? 4 : 3);
        if (hybridRan)
            QVERIFY(!hybrid.contains("skipped"));
        const double serial1 = runs[0].toObject()["median_ms"].toDouble();
        for (int k = 2; k < runs.size(); ++k) {
            const QJsonObject row = runs[k].toObject();
            const QString planned = row["workers"].toInt() > 1 ? "parallel" : "one worker";  // never "parallel" on one
            QCOMPARE(row["configuration"].toString(), k == 2 ? planned : QString("hybrid"));
            QVERIFY(row["median_ms"].toDouble() > 0);
            QCOMPARE(row["speedup_vs_serial_1t"].toDouble(), serial1 / row["median_ms"].toDouble());
            QVERIFY(row.contains("speedup_vs_best_serial"));
            QVERIFY(row.contains("simulated_ms"));
        }
    }

    // On one CPU there is no round trip to time: calibrate says so, in text and JSON.
    void hostOnOneCpu()
    {
        const QList<int> cpus = allowedCpus();
        QVERIFY(!cpus.isEmpty());
        QTemporaryDir dir;
        QString out[2];
        for (int k = 0; k < 2; ++k) {
            QProcess p;
            QStringList args{"-c", QString::number(cpus[0]), test::cliPath(), "calibrate", "-o", dir.filePath("m.json")};
            if (k == 0)
                args << "--json";
            p.start("taskset", args);
            QVERIFY(p.waitForFinished(120000));
            QCOMPARE(p.exitCode(), 0);
            out[k] = QString::fromUtf8(p.readAllStandardOutput());
        }
        checkHost(QJsonDocument::fromJson(out[0].toUtf8()).object()["host"].toObject(), {cpus[0]});
        QVERIFY2(out[1].contains("host           1 CPU, load average ") && out[1].contains("no round trip to time (one CPU)"),
                 qPrintable(out[1]));
    }

    // --host: the host's state alone, nothing measured for the cost model or saved.
    void calibrateHostOnly()
    {
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("RAMIEL_CACHE_DIR", dir.filePath("cache"));
        p.setProcessEnvironment(env);
        p.start(test::cliPath(), {"calibrate", "--host", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(j.keys(), QStringList{"host"});
        checkHost(j["host"].toObject(), allowedCpus());
        QVERIFY(!QFile::exists(dir.filePath("cache/machine-v2.json")));
        const auto text = test::runCli({"calibrate", "--host"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.startsWith("host           ") && text.out.count('\n') == 1, qPrintable(text.out));
        const auto both = test::runCli({"calibrate", "--host", "-o", dir.filePath("m.json")});
        QCOMPARE(both.exitCode, 2);
        QVERIFY(!QFile::exists(dir.filePath("m.json")));

        // --since: the host around the time since an earlier --host --json, in bench's words.
        const QString earlier = dir.filePath("before.json");
        {
            QFile f(earlier);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QJsonDocument(j).toJson());
        }
        const auto around = test::runCli({"calibrate", "--host", "--since", earlier, "--json"});
        QCOMPARE(around.exitCode, 0);
        const QJsonObject a = QJsonDocument::fromJson(around.out.toUtf8()).object();
        {  // read back as written (the round trip through seconds and back to the last bits)
            const QJsonObject b = a["before"].toObject(), h = j["host"].toObject();
            QCOMPARE(b.keys(), h.keys());
            for (const QString& key : h.keys())
                if (key == "round_trip_ns" && !h[key].isNull())
                    QVERIFY(qFuzzyCompare(b[key].toDouble(), h[key].toDouble()));
                else
                    QCOMPARE(b[key], h[key]);
        }
        checkHost(a["after"].toObject(), allowedCpus());
        QVERIFY(a["round_trip_moved"].isBool());
        const auto line = test::runCli({"calibrate", "--host", "--since", earlier});
        QCOMPARE(line.exitCode, 0);
        QVERIFY2(line.out.startsWith("host: ") && line.out.contains("; before, load average ") &&
                     line.out.contains("; after, load average "),
                 qPrintable(line.out));
        QCOMPARE(test::runCli({"calibrate", "--since", earlier}).exitCode, 2);  // needs --host
        const QString notHost = dir.filePath("m.json");
        {
            QFile f(notHost);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"host\": {\"cpus\": 2}}");
        }
        const auto bad = test::runCli({"calibrate", "--host", "--since", notHost});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(notHost) && bad.err.contains("not a host state"), qPrintable(bad.err));
        const auto missing = test::runCli({"calibrate", "--host", "--since", dir.filePath("none.json")});
        QCOMPARE(missing.exitCode, 3);
        QVERIFY2(missing.err.contains(dir.filePath("none.json")), qPrintable(missing.err));
    }

    void unwritableCalibrationTarget()
    {
        const auto r = test::runCli({"calibrate", "-o", "/proc/ramiel-cannot-write/m.json"});
        QCOMPARE(r.exitCode, 3);
        QVERIFY2(r.err.contains("/proc/ramiel-cannot-write/m.json"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
