// Graph optimization passes: the registry, each pass on a small hand-built
// model with exact node counts (and a model where it must not fire), and the
// default pipeline on the exported torchvision models.
#include "core/ir/topology.h"
#include "core/onnx/onnx_import.h"
#include "core/passes/registry.h"
#include "core/util/error.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QtTest>

#include <functional>
#include <map>
#include <random>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

// A float initializer with seeded random values in [lo, hi).
void randomInitializer(OnnxBuilder& b, const std::string& name, const std::vector<int64_t>& dims, float lo, float hi,
                       uint32_t seed)
{
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
        t->add_dims(d);
        n *= d;
    }
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i)
        t->add_float_data(dist(gen));
}

Model load(const OnnxBuilder& b, const std::string& name) { return loadOnnxFromBytes(b.bytes(), name, {}); }

int count(const Model& m, const std::string& op)
{
    int k = 0;
    for (const Node& n : m.graph.nodes())
        k += n.opType == op;
    return k;
}

// One hand-built model per row: the passes to run and the node counts expected.
struct PassCase {
    std::function<OnnxBuilder()> build;
    std::string passes;
    int before = 0;
    int after = 0;
    std::map<std::string, int> opsAfter;  // op -> count expected after
};

const std::map<std::string, PassCase>& passCases()
{
    static const std::map<std::string, PassCase> cases = {
        // x -> Identity -> Relu -> Identity -> y: both go, the last by renaming Relu's output to y.
        {"identity-chain",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4});
              b.node("Identity", {"x"}, {"a"});
              b.node("Relu", {"a"}, {"b"});
              b.node("Identity", {"b"}, {"y"});
              return b;
          },
          "eliminate-identity", 3, 1, {{"Relu", 1}, {"Identity", 0}}}},
        // Dropout (inference), Cast to its own type, Transpose by (0,1), Reshape to [0, 4].
        {"identity-noops",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4});
              b.initializerInt64("shape", {0, 4});
              b.node("Dropout", {"x"}, {"a"});
              OnnxBuilder::setInt(b.node("Cast", {"a"}, {"c"}), "to", onnx::TensorProto::FLOAT);
              OnnxBuilder::setInts(b.node("Transpose", {"c"}, {"t"}), "perm", {0, 1});
              b.node("Reshape", {"t", "shape"}, {"r"});
              b.node("Relu", {"r"}, {"y"});
              return b;
          },
          "eliminate-identity", 5, 1, {{"Relu", 1}}}},
        // Must not fire: the Identity joins a graph input to a graph output, the
        // Cast changes the type, the Transpose swaps, the Reshape fixes the batch.
        {"identity-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {2, 4}).output("y", {2, 4}).output("z", {4, 2}).output("w", {2, 4}, onnx::TensorProto::DOUBLE)
                  .output("v", {2, 4});
              b.initializerInt64("shape", {2, 4});
              b.node("Identity", {"x"}, {"y"});
              OnnxBuilder::setInts(b.node("Transpose", {"x"}, {"z"}), "perm", {1, 0});
              OnnxBuilder::setInt(b.node("Cast", {"x"}, {"w"}), "to", onnx::TensorProto::DOUBLE);
              b.node("Reshape", {"x", "shape"}, {"v"});
              return b;
          },
          "eliminate-identity", 4, 4, {}}},
        // A branch that reaches no output, and an initializer nobody reads.
        {"dce",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4});
              b.initializer("unused", {4});
              b.initializer("bias", {4});
              b.node("Relu", {"x"}, {"y"});
              b.node("Add", {"x", "bias"}, {"dead1"});
              b.node("Sigmoid", {"dead1"}, {"dead2"});
              return b;
          },
          "dce", 3, 1, {{"Relu", 1}}}},
        // Must not fire: every node reaches an output.
        {"dce-must-not-fire",
         {[] {
              OnnxBuilder b;
              b.input("x", {1, 4}).output("y", {1, 4}).output("z", {1, 4});
              b.node("Relu", {"x"}, {"y"});
              b.node("Sigmoid", {"y"}, {"z"});
              return b;
          },
          "dce", 2, 2, {}}},
    };
    return cases;
}

}  // namespace

class TestPasses : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void registryTable()
    {
        const auto& table = passes::registeredPasses();
        QVERIFY(table.size() >= 3);
        for (const auto& p : table) {
            QVERIFY2(!p.summary.empty(), p.name.c_str());
            QCOMPARE(bool(p.create), !p.scheduling);
            for (const std::string& r : p.requires)
                QVERIFY2(&passes::findPass(r) != nullptr, r.c_str());
        }
        QCOMPARE(passes::findPass("dce").name, std::string("dce"));
        QVERIFY(passes::findPass("clone").scheduling);
    }

    void parsePassList()
    {
        QVERIFY(passes::parsePassList("none").empty());
        QCOMPARE(passes::parsePassList("dce,eliminate-identity"),
                 (std::vector<std::string>{"eliminate-identity", "dce"}));  // table order
        std::vector<std::string> defaults;
        for (const auto& p : passes::registeredPasses())
            if (p.onByDefault)
                defaults.push_back(p.name);
        QCOMPARE(passes::parsePassList("default"), defaults);
        QCOMPARE(passes::parsePassList("all").size(), passes::registeredPasses().size());
        try {
            passes::parsePassList("dce,bogus");
            QFAIL("an unknown pass was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(e.message().find("bogus") != std::string::npos && e.message().find("dce") != std::string::npos,
                     e.what());
        }
    }

    void pipelineReportsAndDumps()
    {
        Model m = load(passCases().at("identity-chain").build(), "chain.onnx");
        std::vector<std::string> dumped;
        const auto result = passes::runPipeline(m, passes::parsePassList("default"), {},
                                                [&](const std::string& name, const Model&) { dumped.push_back(name); });
        QVERIFY(result.clone);
        QCOMPARE(result.stats.size(), dumped.size());
        QCOMPARE(result.stats.front().first, std::string("eliminate-identity"));
        QCOMPARE(result.stats.front().second.nodesBefore, 3);
        QCOMPARE(result.stats.front().second.nodesAfter, 1);
        QCOMPARE(result.stats.front().second.removed, 2);
    }

    void handBuilt_data()
    {
        QTest::addColumn<QString>("name");
        for (const auto& [name, c] : passCases())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    // Exact node counts before and after one pass on a small model.
    void handBuilt()
    {
        QFETCH(QString, name);
        const PassCase& c = passCases().at(name.toStdString());
        Model m = load(c.build(), name.toStdString() + ".onnx");
        QCOMPARE(int(m.graph.nodeCount()), c.before);
        const auto result = passes::runPipeline(m, passes::parsePassList(c.passes), {});
        QCOMPARE(int(m.graph.nodeCount()), c.after);
        for (const auto& [op, k] : c.opsAfter)
            QCOMPARE(count(m, op), k);
        // The graph's interface is unchanged.
        const Model original = load(c.build(), "original.onnx");
        QCOMPARE(m.graph.outputs().size(), original.graph.outputs().size());
        for (size_t i = 0; i < m.graph.outputs().size(); ++i)
            QCOMPARE(m.graph.value(m.graph.outputs()[i]).name, original.graph.value(original.graph.outputs()[i]).name);
        buildTopology(m.graph);  // still acyclic, every value defined
        // A second run changes nothing.
        passes::runPipeline(m, passes::parsePassList(c.passes), {});
        QCOMPARE(int(m.graph.nodeCount()), c.after);
    }
};

QTEST_GUILESS_MAIN(TestPasses)
#include "tst_passes.moc"
