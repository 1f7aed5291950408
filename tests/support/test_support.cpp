#include "test_support.h"

#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <algorithm>
#include <cmath>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <set>
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

std::vector<ConformanceTest> claimedConformanceTests(QStringList& unloadable)
{
    const auto ops = runtime().supportedOperators();
    const std::set<std::string> claimed(ops.begin(), ops.end());
    std::vector<ConformanceTest> tests;
    for (const QString group : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
        const QDir root(conformanceDataDir() + "/" + group);
        for (const QString& folder : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            ConformanceTest t{group == "node" ? folder : group + "/" + folder, root.filePath(folder), {}};
            try {
                t.model = loadOnnx((t.dir + "/model.onnx").toStdString());
            } catch (const Error& e) {
                unloadable << t.name + ": does not load: " + e.what();
                continue;
            }
            bool mine = true;
            for (const Node& n : t.model.graph.nodes())
                mine = mine && n.domain.empty() && claimed.count(n.opType);
            if (mine)
                tests.push_back(std::move(t));
        }
    }
    return tests;
}

QStringList conformanceData(const QString& dir, const QString& kind)
{
    QStringList files;
    for (int i = 0;; ++i) {
        const QString pb = QString("%1/test_data_set_0/%2_%3.pb").arg(dir, kind).arg(i);
        if (!QFileInfo::exists(pb))
            return files;
        files << pb;
    }
}

QString readText(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

std::map<QString, QString> readReasonList(const QString& path)
{
    std::map<QString, QString> list;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return list;
    for (const QString& line : QString::fromUtf8(f.readAll()).split('\n')) {
        const QString l = line.trimmed();
        if (l.isEmpty() || l.startsWith('#'))
            continue;
        const int space = l.indexOf(' ');
        list[l.left(space)] = space > 0 ? l.mid(space + 1).trimmed() : QString();
    }
    return list;
}

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

namespace {

double valueAt(const Tensor& t, int64_t i)
{
    return t.dtype == DataType::Int64 ? double(t.at<int64_t>(i)) : double(t.at<float>(i));
}

double largestMagnitude(const Tensor& t)
{
    double m = 0;
    for (int64_t i = 0; i < t.numel(); ++i)
        m = std::max(m, std::fabs(valueAt(t, i)));
    return m;
}

}  // namespace

double detectionDifference(const std::vector<Tensor>& got, const std::vector<Tensor>& ref, QString& worst)
{
    const int64_t n = ref[2].numel();
    if (got[2].numel() != n || got[0].numel() != 4 * n || got[1].numel() != n) {
        worst = QString("%1 detections, the reference has %2").arg(got[2].numel()).arg(n);
        return INFINITY;
    }
    const double boxScale = std::max(largestMagnitude(ref[0]), 1e-12), scoreScale = std::max(largestMagnitude(ref[2]), 1e-12);
    std::vector<char> used(size_t(n), 0);
    double largest = 0;
    for (int64_t r = 0; r < n; ++r) {
        int64_t best = -1;
        double bestDiff = INFINITY;
        for (int64_t g = 0; g < n; ++g) {
            if (used[size_t(g)] || valueAt(got[1], g) != valueAt(ref[1], r))
                continue;
            double d = std::fabs(valueAt(got[2], g) - valueAt(ref[2], r)) / scoreScale;
            for (int k = 0; k < 4; ++k)
                d = std::max(d, std::fabs(valueAt(got[0], 4 * g + k) - valueAt(ref[0], 4 * r + k)) / boxScale);
            if (d < bestDiff)
                bestDiff = d, best = g;
        }
        if (best < 0) {
            worst = QString("reference detection %1 (label %2) has no match").arg(r).arg(valueAt(ref[1], r));
            return INFINITY;
        }
        used[size_t(best)] = 1;
        if (bestDiff > largest) {
            largest = bestDiff;
            worst = QString("detection %1").arg(r);
        }
    }
    return largest;
}

double relativeDifference(const Tensor& a, const Tensor& b)
{
    const auto x = a.toDoubles(), y = b.toDoubles();
    if (!x || !y || x->size() != y->size() || a.dims != b.dims)
        return INFINITY;
    double diff = 0, scale = 0;
    for (size_t i = 0; i < x->size(); ++i) {
        const double p = (*x)[i], q = (*y)[i];
        if (std::isnan(p) || std::isnan(q)) {  // a NaN matches only a NaN
            if (std::isnan(p) != std::isnan(q))
                return INFINITY;
            continue;
        }
        diff = std::max(diff, std::abs(p - q));
        scale = std::max(scale, std::abs(q));
    }
    return diff / std::max(scale, 1e-30);
}

double largestDifference(const std::vector<Tensor>& got, const std::vector<Tensor>& ref)
{
    if (got.size() != ref.size())
        return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i)
        worst = std::max(worst, relativeDifference(got[i], ref[i]));
    return worst;
}

}  // namespace ramiel::test
