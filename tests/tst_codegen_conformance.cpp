// ONNX's own conformance node tests (libonnx-testdata) through code generation: every test
// that the runtime passes is exported as Python (a linear schedule on two workers) and the
// generated model runs forward() and forward_parallel() on the stored inputs under
// /usr/bin/python3 (tests/support/check_generated.py); both must give the stored outputs.
// A test that is not generated is listed with its reason in
// tests/data/codegen_conformance_skips.txt, and that list must stay exact.
#include "core/analysis/cost_model.h"
#include "core/codegen/codegen.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/schedule/scheduler.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

#include <set>

using namespace ramiel;

namespace {

const QString kPython = "/usr/bin/python3";

// A refusal as codegen_conformance_skips.txt gives it: without the path, the node's name and
// the list of supported operators.
QString reasonOf(const std::string& message)
{
    QString m = QString::fromStdString(message);
    m.remove(QRegularExpression("^.*?code generation: ")).remove(QRegularExpression("; supported: .*$"));
    return m.remove(QRegularExpression(" \\(node '[^']*'\\)")).trimmed();
}

// Writes `name`'s Python into `folder`; empty, or why it is not generated (the generators'
// refusal, or a stored tensor that .npy cannot hold). Appends its manifest line.
QString generate(const QString& name, const QString& dir, const Model& model, const QString& folder, QString& manifest)
{
    const Topology topo = buildTopology(model.graph);
    const CostTable costs =
        CostTable::fromStatic(model.graph, topo, estimateCosts(model.graph), MachineConstants{}, EdgeCostParameters{});
    const Schedule schedule = planSchedule(SchedulingProblem::of(model.graph, topo, costs, 2), "linear").schedule;
    QStringList inputs, outputs;
    for (const auto& [kind, files] : {std::pair{QString("input"), &inputs}, std::pair{QString("output"), &outputs}}) {
        const QStringList stored = test::conformanceData(dir, kind);
        for (int i = 0; i < stored.size(); ++i) {
            const Tensor t = readTensorProto(stored[i].toStdString());
            if (!npyCanStore(t.dtype))
                return QString::fromStdString("a stored " + dataTypeName(t.dtype) + " tensor, which .npy cannot hold");
            files->append(QString("%1/%2_%3.npy").arg(folder, kind).arg(i));
            QDir().mkpath(folder);
            writeNpy(files->back().toStdString(), t);
        }
    }
    CodegenRequest request;
    request.model = &model;
    request.topo = &topo;
    request.schedule = &schedule;
    request.outputDir = folder.toStdString();
    try {
        generateCode(request);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Unsupported)
            throw;
        return reasonOf(e.message());
    }
    manifest += QStringList{name, folder}.join('\t') + '\t' + inputs.join('\t') + (inputs.isEmpty() ? "" : "\t") + "--\t" +
                outputs.join('\t') + '\n';
    return {};
}

}  // namespace

class TestCodegenConformance : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void generatedPythonPasses()
    {
        if (!QDir(test::conformanceDataDir() + "/node").exists())
            QFAIL("libonnx-testdata is missing: apt-get install libonnx-testdata");
        QVERIFY2(QFile::exists(kPython), "/usr/bin/python3 is needed to run generated Python");
        const QString work = QDir(test::modelsDir() + "/../codegen-conformance").absolutePath();
        QDir(work).removeRecursively();
        QVERIFY(QDir().mkpath(work));
        const auto runtimeSkips = test::readReasonList(test::sourcePath("tests/data/conformance_skips.txt"));
        const auto listed = test::readReasonList(test::sourcePath("tests/data/codegen_conformance_skips.txt"));
        std::set<QString> unusedSkips;
        for (const auto& [name, reason] : listed)
            unusedSkips.insert(name);

        QString manifest;
        QStringList failures, unloadable;  // tst_conformance_run reports models that do not load
        int generated = 0, skipped = 0;
        for (const auto& [name, dir, model] : test::claimedConformanceTests(unloadable)) {
            if (runtimeSkips.count(name))
                continue;  // not a test the runtime passes
            QString why;
            try {
                why = generate(name, dir, model, work + "/" + QString(name).replace('/', '_'), manifest);
            } catch (const std::exception& e) {
                failures << name + ": generation failed: " + e.what();
                continue;
            }
            unusedSkips.erase(name);
            if (why.isEmpty() && listed.count(name))
                failures << name + ": listed in codegen_conformance_skips.txt but generated now";
            else if (!why.isEmpty() && !listed.count(name))
                failures << name + ": not generated and not listed: " + why;
            else if (!why.isEmpty() && listed.at(name) != why)
                failures << name + ": not generated because " + why + ", not as listed: " + listed.at(name);
            why.isEmpty() ? ++generated : ++skipped;
        }
        const QString manifestPath = work + "/manifest.tsv";
        {
            QFile f(manifestPath);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(manifest.toUtf8());
        }
        QProcess p;  // results on stdout; warnings of PyTorch's (beta functions) on stderr
        p.start(kPython, {test::sourcePath("tests/support/check_generated.py"), manifestPath});
        QVERIFY(p.waitForFinished(900000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                 qPrintable((out + QString::fromUtf8(p.readAllStandardError())).right(4000)));
        int passed = 0, reported = 0;
        for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) {
            ++reported;
            if (line.endsWith(" ok"))
                ++passed;
            else
                failures << line;
        }
        if (reported != generated)
            failures << QString("the check reported %1 of %2 generated tests").arg(reported).arg(generated);

        // The plain closing line, then the details.
        qInfo("codegen conformance: %d pass, %d fail, %d not generated", passed, int(failures.size()), skipped);
        for (const QString& f : failures)
            qWarning("%s", qPrintable(f));
        for (const QString& s : unusedSkips)
            qWarning("codegen_conformance_skips.txt: %s is not a test the runtime passes", qPrintable(s));
        QVERIFY2(failures.isEmpty(), qPrintable(QString("%1 conformance tests failed through generated code").arg(failures.size())));
        QVERIFY(unusedSkips.empty());
        QVERIFY(passed > 500);

        // README.md and docs/codegen.md give these figures.
        const auto readme = QRegularExpression("(\\d+) of ONNX's conformance tests pass through generated Python")
                                .match(test::readText(test::sourcePath("README.md")).simplified());
        QVERIFY2(readme.hasMatch(), "README.md lacks 'P of ONNX's conformance tests pass through generated Python'");
        QCOMPARE(readme.captured(1).toInt(), passed);
        const auto d = QRegularExpression("conformance tests: (\\d+) pass through generated Python, (\\d+) (?:is|are) not generated")
                           .match(test::readText(test::sourcePath("docs/codegen.md")).simplified());
        QVERIFY2(d.hasMatch(), "docs/codegen.md lacks 'conformance tests: P pass through generated Python, S are not generated'");
        QCOMPARE(d.captured(1).toInt(), passed);
        QCOMPARE(d.captured(2).toInt(), skipped);
    }
};

QTEST_GUILESS_MAIN(TestCodegenConformance)
#include "tst_codegen_conformance.moc"
