#include "test_support.h"

#include <algorithm>
#include <cmath>

#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <sstream>

namespace ramiel::test {

QString sourcePath(const QString& relative) { return QStringLiteral(RAMIEL_SOURCE_DIR "/") + relative; }
QString modelsDir() { return QStringLiteral(RAMIEL_MODELS_DIR); }
QString modelPath(const QString& name) { return modelsDir() + "/" + name + ".onnx"; }

QString ortModulesPath()
{
    QString modules = qEnvironmentVariable("RAMIEL_ORT_NODE_PATH");
    for (const QString& candidate : {modelsDir() + "/../ort/node_modules", QString("/tmp/ort/node_modules")})
        if (modules.isEmpty() && QFileInfo::exists(candidate + "/onnxruntime-node"))
            modules = candidate;
    if (QStandardPaths::findExecutable("node").isEmpty() || !QFileInfo::exists(modules + "/onnxruntime-node"))
        return {};
    return modules;
}
QString cliPath() { return QStringLiteral(RAMIEL_CLI); }

const QStringList& torchvisionModels()
{
    static const QStringList names = {"googlenet", "inception_v3", "squeezenet1_0",
                                      "resnet18", "densenet121", "mobilenet_v2"};
    return names;
}

void addTorchvisionRows()
{
    QTest::addColumn<QString>("name");
    for (const QString& n : torchvisionModels())
        QTest::newRow(qPrintable(n)) << n;
}
QString conformanceDataDir() { return QStringLiteral("/usr/share/libonnx-testdata/data"); }

CliResult runCli(const QStringList& args, int timeoutMs)
{
    QProcess p;
    p.start(cliPath(), args);
    CliResult r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

SpecGraph graphFromSpec(const std::string& spec)
{
    SpecGraph s;
    const auto semi = spec.find(';');
    std::istringstream nodes(spec.substr(0, semi));
    std::istringstream edges(semi == std::string::npos ? std::string() : spec.substr(semi + 1));
    std::vector<std::pair<std::string, double>> decl;
    std::string tok;
    while (nodes >> tok) {
        const auto colon = tok.find(':');
        decl.emplace_back(tok.substr(0, colon), colon == std::string::npos ? 1.0 : std::stod(tok.substr(colon + 1)));
    }
    std::map<std::string, std::vector<std::string>> inputsOf;
    while (edges >> tok) {
        const auto gt = tok.find('>');
        inputsOf[tok.substr(gt + 1)].push_back(tok.substr(0, gt));
    }
    for (const auto& [name, cost] : decl)
        s.graph.addValue(name + ".out");
    for (const auto& [name, cost] : decl) {
        Node n;
        n.name = name;
        n.opType = "Op";
        for (const std::string& src : inputsOf[name])
            n.inputs.push_back(s.graph.findValue(src + ".out"));
        n.outputs.push_back(s.graph.findValue(name + ".out"));
        s.id[name] = s.graph.addNode(std::move(n));
        s.cost.push_back(cost);
    }
    return s;
}

QStringList nodeNames(const Graph& g, const std::vector<NodeId>& ids)
{
    QStringList out;
    for (NodeId id : ids)
        out << QString::fromStdString(g.node(id).name);
    return out;
}

double relativeDifference(const Tensor& a, const Tensor& b)
{
    const auto x = a.toDoubles(), y = b.toDoubles();
    if (!x || !y || x->size() != y->size() || a.dims != b.dims)
        return INFINITY;
    double diff = 0, scale = 0;
    for (size_t i = 0; i < x->size(); ++i) {
        diff = std::max(diff, std::abs((*x)[i] - (*y)[i]));
        scale = std::max(scale, std::abs((*y)[i]));
    }
    return diff / std::max(scale, 1e-30);
}

}  // namespace ramiel::test
