// The code generators' templates (core/codegen/templates/) checked on their
// own, without a model: each Python template is clean under pyflakes, the C++
// templates compile (syntax only, with the project's compiler, against
// libtorch's headers), each file is embedded in templates.h as its text
// without the check-only blocks, and a broken template fails the checks.
#include "core/codegen/program.h"
// Hidden from moc, which reads the templates' text in its raw strings as C++ tokens: an
// apostrophe in a comment of theirs opened a character literal there and lost the namespace.
#ifndef Q_MOC_RUN
#include "core/codegen/templates.h"
#endif
#include "core/util/error.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <optional>

using namespace ramiel;

namespace {

const QString kPython = "/usr/bin/python3";

struct Check {
    bool ok = false;
    QString out;
};

Check runProcess(const QString& program, const QStringList& args)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    const bool finished = p.waitForFinished(600000);
    Check c;
    c.out = QString::fromUtf8(p.readAll());
    c.ok = finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    if (!finished || p.exitStatus() != QProcess::NormalExit)
        c.out += "\n(" + program + " did not finish: " + p.errorString() + ")";
    return c;
}

// pyflakes prints nothing for a clean file.
Check lintPython(const QString& file)
{
    Check c = runProcess(kPython, {"-m", "pyflakes", file});
    c.ok = c.ok && c.out.trimmed().isEmpty();
    return c;
}

// Every C++ template of `dir` in one translation unit, each in a namespace of
// its own: libtorch's headers (through prelude.cpp) are parsed once, and each
// template sees only what its check-only block declares. `extra`: more compiler
// options (the oneDNN configuration).
Check compileCpp(const QString& dir, const QString& workDir, const QStringList& extra = {})
{
    QString unit = "#include \"prelude.cpp\"\n";
    for (const QString& file : QDir(dir).entryList({"*.cpp"}, QDir::Files, QDir::Name))
        if (file != "prelude.cpp")
            unit += "namespace check_" + QFileInfo(file).completeBaseName() + " {\n#include \"" + file + "\"\n}\n";
    const QString path = workDir + "/templates_check.cpp";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {false, "cannot write " + path};
    f.write(unit.toUtf8());
    f.close();
    QStringList args = {"-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                        "-Wfatal-errors", "-iquote", dir};
    args << QString(RAMIEL_TORCH_CXX_FLAGS).split(' ', Qt::SkipEmptyParts);
    for (const QString& include : QString(RAMIEL_TORCH_INCLUDE_DIRS).split('|', Qt::SkipEmptyParts))
        args << "-isystem" << include;
    return runProcess(RAMIEL_CXX_COMPILER, args << extra << path);
}

// The generated CMakeLists.txt defines HAVE_ONEDNN where it finds oneDNN's headers, as the
// project's own build did; without them the programs take libtorch's operators.
QStringList oneDnnOptions()
{
    QStringList options = {"-DHAVE_ONEDNN=1"};
    for (const QString& include : QString(RAMIEL_DNNL_INCLUDE_DIRS).split('|', Qt::SkipEmptyParts))
        options << "-isystem" << include;
    return options;
}

// A template's text as embedded: without the lines from "<check-only" to "</check-only>".
QString withoutCheckOnly(const QString& text)
{
    static const QRegularExpression block("^[^\\n]*<check-only.*?</check-only>[^\\n]*(\\n|$)",
                                          QRegularExpression::MultilineOption |
                                              QRegularExpression::DotMatchesEverythingOption);
    return QString(text).remove(block);
}

}  // namespace

class TestCodegenTemplates : public QObject {
    Q_OBJECT

    const QString dir_ = test::sourcePath("core/codegen/templates");
    QTemporaryDir work_;
    std::optional<Check> cpp_;  // one compile for all C++ rows

    static QStringList templateFiles(const QString& dir)
    {
        QStringList files;
        for (const QString& file : QDir(dir + "/python").entryList({"*.py"}, QDir::Files, QDir::Name))
            files << "python/" + file;
        for (const QString& file : QDir(dir + "/cpp").entryList({"*.cpp"}, QDir::Files, QDir::Name))
            files << "cpp/" + file;
        return files;
    }

    void addRows(const QString& language)
    {
        QTest::addColumn<QString>("file");
        for (const QString& file : templateFiles(dir_))
            if (language.isEmpty() || file.startsWith(language + "/"))
                QTest::newRow(qPrintable(file)) << file;
    }

    // Copies the templates to a scratch folder with `file` broken by `insert` at line `line` (from 0).
    QString brokenCopy(const QString& file, int line, const QString& insert)
    {
        const QString copy = work_.path() + "/broken";
        QDir(copy).removeRecursively();
        for (const QString& f : templateFiles(dir_)) {
            QDir().mkpath(QFileInfo(copy + "/" + f).path());
            QFile::copy(dir_ + "/" + f, copy + "/" + f);
        }
        QStringList lines = test::readText(dir_ + "/" + file).split('\n');
        lines.insert(line, insert);
        QFile out(copy + "/" + file);
        QFile::remove(copy + "/" + file);
        if (out.open(QIODevice::WriteOnly))
            out.write(lines.join('\n').toUtf8());
        return copy;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(work_.isValid());
        QVERIFY2(templateFiles(dir_).size() >= 2, qPrintable("no templates in " + dir_));
        const Check pyflakes = runProcess(kPython, {"-m", "pyflakes", "--version"});
        QVERIFY2(pyflakes.ok, qPrintable("/usr/bin/python3 -m pyflakes is needed (python3-pyflakes): " + pyflakes.out));
    }

    void python_data() { addRows("python"); }
    void python()
    {
        QFETCH(QString, file);
        const Check c = lintPython(dir_ + "/" + file);
        QVERIFY2(c.ok, qPrintable(c.out.left(4000)));
    }

    void cpp_data() { addRows("cpp"); }
    void cpp()
    {
        QFETCH(QString, file);
        if (!RAMIEL_HAVE_TORCH)
            QSKIP("built without libtorch (RAMIEL_BUILD_RUNTIME=OFF): no headers to compile the C++ templates against");
        if (!cpp_) {  // both configurations of onednn.cpp
            cpp_ = compileCpp(dir_ + "/cpp", work_.path());
            if (cpp_->ok && RAMIEL_HAVE_DNNL)
                cpp_ = compileCpp(dir_ + "/cpp", work_.path(), oneDnnOptions());
        }
        if (cpp_->ok)
            return;
        // -Wfatal-errors: the compiler stopped at the first error, in this template or in another.
        const auto named = [&](const QString& f) { return cpp_->out.contains(QDir(dir_).filePath(f) + ":"); };
        QVERIFY2(!named(file), qPrintable(cpp_->out.left(4000)));
        for (const QString& other : templateFiles(dir_))
            if (named(other))
                QSKIP(qPrintable("not checked: the compile stopped at an error in " + other));
        QFAIL(qPrintable(cpp_->out.left(4000)));
    }

    // templates.h holds every template without its check-only blocks (one missing from core/CMakeLists.txt fails).
    void embedded_data() { addRows({}); }
    void embedded()
    {
        QFETCH(QString, file);
        const QString expected = withoutCheckOnly(test::readText(dir_ + "/" + file));
        QVERIFY(!expected.isEmpty());
        for (const codegen::templates::Template& t : codegen::templates::kAll)
            if (QString::fromUtf8(t.path.data(), int(t.path.size())) == file) {
                const QString text = QString::fromUtf8(t.text.data(), int(t.text.size()));
                QVERIFY2(!text.contains("check-only"), qPrintable(text.left(2000)));
                QCOMPARE(text, expected);
                return;
            }
        QFAIL(qPrintable(file + " is not embedded: add it to RAMIEL_CODEGEN_TEMPLATES in core/CMakeLists.txt"));
    }

    void brokenTemplateFails()
    {
        const QString python = brokenCopy("python/slots.py", 5, "def broken(:");
        const Check lint = lintPython(python + "/python/slots.py");
        QVERIFY2(!lint.ok && lint.out.contains("slots.py"), qPrintable(lint.out));
        if (!RAMIEL_HAVE_TORCH)
            QSKIP("built without libtorch: the C++ half needs its headers");
        // Before prelude.cpp's #includes, so that -Wfatal-errors stops the compile at once.
        const QString cpp = brokenCopy("cpp/prelude.cpp", 0, "int broken = ;");
        const Check compile = compileCpp(cpp + "/cpp", work_.path());
        QVERIFY2(!compile.ok && compile.out.contains("prelude.cpp:1:"), qPrintable(compile.out));
    }

    void fillTemplate()
    {
        using codegen::fillTemplate;
        // A placeholder alone on its line stands for whole lines; elsewhere for text.
        QCOMPARE(QString::fromStdString(fillTemplate("x = [\n    RAMIEL_ITEMS\n]\nm = RAMIEL_M  # RAMIEL_M\n",
                                                     {{"RAMIEL_ITEMS", "    1,\n    2,\n"}, {"RAMIEL_M", "b'!'"}})),
                 QString("x = [\n    1,\n    2,\n]\nm = b'!'  # b'!'\n"));
        QCOMPARE(QString::fromStdString(fillTemplate("RAMIEL_A", {{"RAMIEL_A", "a"}})), QString("a"));
        for (const auto& [text, values] :
             std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>{
                 {"RAMIEL_UNKNOWN\n", {}}, {"no placeholder\n", {{"RAMIEL_A", "a"}}}}) {
            try {
                fillTemplate(text, values);
                QFAIL(qPrintable(QString::fromStdString(text) + ": accepted"));
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::Internal);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCodegenTemplates)
#include "tst_codegen_templates.moc"
