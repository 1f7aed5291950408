// Helpers shared by the test suites: paths into the source and build trees,
// running the CLI, and building graphs from a compact text spec.
#pragma once

#include "core/ir/graph.h"
#include "core/ir/model.h"

#include <QString>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

namespace ramiel::test {

QString sourcePath(const QString& relative);   // in the source tree
QString modelsDir();                           // exported torchvision models (build tree)
QString modelPath(const QString& name);        // modelsDir()/name.onnx
// Where onnxruntime-node is: $RAMIEL_ORT_NODE_PATH, else build/ort (scripts/test.sh
// installs it there), else /tmp/ort; empty when none has it or node is missing.
QString ortModulesPath();
QString cliPath();                             // the ramiel executable

// The torchvision models export_models.py writes (names as in torchvision).
const QStringList& torchvisionModels();
// A data-driven test's "name" column with one row per torchvision model.
void addTorchvisionRows();
QString conformanceDataDir();                  // libonnx-testdata's data folder
// ONNX's conformance tests (libonnx-testdata's node, pytorch-converted, pytorch-operator and
// simple groups, in name order) whose every node is an operator the runtime claims. A node
// test is named as its folder (test_abs), the others with their group (simple/test_sign_model),
// as the skip lists name them. A model that does not load is added to `unloadable` with why.
struct ConformanceTest {
    QString name;
    QString dir;
    Model model;
};
std::vector<ConformanceTest> claimedConformanceTests(QStringList& unloadable);
// A conformance test's stored tensors of one kind ("input" or "output") in test_data_set_0,
// in order: the paths of KIND_0.pb, KIND_1.pb, ... while they exist.
QStringList conformanceData(const QString& dir, const QString& kind);
// A list of "NAME reason..." lines (tests/data/*.txt; '#' comments and blank lines skipped):
// name -> reason. Empty when the file cannot be read.
std::map<QString, QString> readReasonList(const QString& path);
// A text file's contents, empty when it cannot be read.
QString readText(const QString& path);

struct CliResult {
    int exitCode = -1;
    QString out;
    QString err;
};
CliResult runCli(const QStringList& args, int timeoutMs = 120000);

// A graph from "A:1 B:2 C:3 ; A>B B>C": nodes with costs, then edges. Each
// node gets one output value; an edge makes the target read the source's
// output. Costs are returned by node id.
struct SpecGraph {
    Graph graph;
    std::vector<double> cost;
    std::map<std::string, NodeId> id;
};
SpecGraph graphFromSpec(const std::string& spec);

// Largest |a - b| relative to the largest |b| (random-weight models reach
// large magnitudes); infinite when the shapes or element counts differ or a
// NaN meets a number (a NaN matches a NaN).
double relativeDifference(const Tensor& a, const Tensor& b);

// The largest relativeDifference of a run's outputs from the reference's, output by output;
// infinite when their counts differ.
double largestDifference(const std::vector<Tensor>& got, const std::vector<Tensor>& ref);

// Detections (boxes [N,4], labels [N], scores [N]) against the reference's as
// sets: each reference detection is matched to one of the same label whose box
// and score are nearest; the largest difference, relative to the reference's
// largest coordinate or score, is returned (infinite when the counts differ or
// a reference detection finds no match), and `worst` says where it is.
double detectionDifference(const std::vector<Tensor>& got, const std::vector<Tensor>& ref, QString& worst);

// Node names of a list of ids.
QStringList nodeNames(const Graph& g, const std::vector<NodeId>& ids);

}  // namespace ramiel::test
