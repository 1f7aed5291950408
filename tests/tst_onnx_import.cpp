// ONNX import: real models, shapes, external data, subgraphs, unknown domains.
#include "core/ir/topology.h"
#include "core/analysis/cost_model.h"
#include "core/onnx/onnx_import.h"
#include "core/util/error.h"
#include "onnx_builder.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace ramiel;
using ramiel::test::OnnxBuilder;

namespace {

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool contains(const std::vector<std::string>& warnings, const QString& needle)
{
    for (const auto& w : warnings)
        if (QString::fromStdString(w).contains(needle))
            return true;
    return false;
}

OnnxBuilder symbolicConvModel()
{
    OnnxBuilder b;
    b.input("x", {-1, 3, -1, -1}, onnx::TensorProto::FLOAT, {"N", "", "H", "W"})
        .initializer("w", {4, 3, 3, 3})
        .output("y", {-1, -1, -1, -1});
    OnnxBuilder::setInts(b.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"y"}, "relu");
    return b;
}

}  // namespace

class TestOnnxImport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bundledSample()
    {
        const Model m = loadOnnx(test::sourcePath("resources/models/inception_sample.onnx").toStdString());
        QCOMPARE(m.graph.nodeCount(), size_t(74));
        QCOMPARE(m.graph.initializerCount(), size_t(71));
        QCOMPARE(m.opsetVersion(), int64_t(13));
        QVERIFY2(m.warnings.empty(), m.warnings.empty() ? "" : m.warnings.front().c_str());
        for (const Value& v : m.graph.values())
            QVERIFY2(v.type.shape && v.type.shape->isFullyKnown(), v.name.c_str());
        for (const NodeCost& c : estimateCosts(m.graph))
            QVERIFY(c.known);
    }

    void torchvision_data() { test::addTorchvisionRows(); }

    // Counts match what the onnx package reports (written by export_models.py).
    void torchvision()
    {
        QFETCH(QString, name);
        const QJsonObject expected = readJson(test::modelsDir() + "/" + name + ".counts.json");
        QVERIFY2(!expected.isEmpty(), "counts.json missing: did the export_models fixture run?");
        const Model m = loadOnnx(test::modelPath(name).toStdString());
        QCOMPARE(int(m.graph.nodeCount()), expected["nodes"].toInt());
        QCOMPARE(int(m.graph.valueCount()), expected["values"].toInt());
        QCOMPARE(int(m.graph.initializerCount()), expected["initializers"].toInt());
        QCOMPARE(int(m.graph.outputs().size()), expected["outputs"].toInt());
        QVERIFY2(m.warnings.empty(), m.warnings.empty() ? "" : m.warnings.front().c_str());
        for (const NodeCost& c : estimateCosts(m.graph))
            QVERIFY2(c.known, c.unknownReason.c_str());
        buildTopology(m.graph);  // acyclic
    }

    void googlenetConvOutputsAre4D()
    {
        const Model m = loadOnnx(test::modelPath("googlenet").toStdString());
        int convs = 0;
        for (const Node& n : m.graph.nodes()) {
            if (n.opType != "Conv")
                continue;
            ++convs;
            const Value& out = m.graph.value(n.outputs[0]);
            QVERIFY2(out.type.shape && out.type.shape->rank() == 4 && out.type.shape->isFullyKnown(),
                     (n.name + ": " + out.type.toString()).c_str());
        }
        QCOMPARE(convs, 57);
    }

    void symbolicDimsLoadAndAreReported()
    {
        const Model m = loadOnnxFromBytes(symbolicConvModel().bytes(), "sym.onnx", {});
        const Value& x = m.graph.value(m.graph.findValue("x"));
        QCOMPARE(x.type.shape->toString(), std::string("Nx3xHxW"));
        QVERIFY(contains(m.warnings, "--shape"));
        for (const NodeCost& c : estimateCosts(m.graph))
            QVERIFY(!c.known);
    }

    void shapeOverrideFixesSizes()
    {
        ImportOptions o;
        addInputShape(o, "x=2,3,8,8");
        const Model m = loadOnnxFromBytes(symbolicConvModel().bytes(), "sym.onnx", {}, o);
        QCOMPARE(m.graph.value(m.graph.findValue("y")).type.toString(), std::string("float[2x4x8x8]"));
        QVERIFY2(m.warnings.empty(), m.warnings.empty() ? "" : m.warnings.front().c_str());
        const auto costs = estimateCosts(m.graph);
        QCOMPARE(costs[0].flops, 2.0 * (2 * 4 * 8 * 8) * 27);
    }

    // A symbolic first size alone (the batch) is read as one sample when asked;
    // any other unknown size, rank 1, or a --shape for the input leaves it be.
    void symbolicBatchAsOneSample_data()
    {
        QTest::addColumn<QList<qint64>>("dims");
        QTest::addColumn<QStringList>("symbols");
        QTest::addColumn<QString>("shape");  // --shape for x, or empty
        QTest::addColumn<bool>("asked");
        QTest::addColumn<QString>("read");   // x's sizes as read
        QTest::addColumn<QString>("symbol"); // listed in oneSampleInputs with this name; "-" not listed
        const QList<qint64> nchw{-1, 3, 8, 8};
        QTest::newRow("named batch") << nchw << QStringList{"N", "", "", ""} << "" << true << "1x3x8x8" << "N";
        QTest::newRow("unnamed batch") << nchw << QStringList{} << "" << true << "1x3x8x8" << "";
        QTest::newRow("not asked") << nchw << QStringList{"N", "", "", ""} << "" << false << "Nx3x8x8" << "-";
        QTest::newRow("--shape wins") << nchw << QStringList{"N", "", "", ""} << "x=2,3,8,8" << true << "2x3x8x8"
                                      << "-";
        QTest::newRow("height symbolic too") << QList<qint64>{-1, 3, -1, 8} << QStringList{"N", "", "H", ""} << ""
                                             << true << "Nx3xHx8" << "-";
        QTest::newRow("rank 1") << QList<qint64>{-1} << QStringList{"N"} << "" << true << "N" << "-";
        QTest::newRow("sizes known") << QList<qint64>{2, 3, 8, 8} << QStringList{} << "" << true << "2x3x8x8" << "-";
    }

    void symbolicBatchAsOneSample()
    {
        QFETCH(QList<qint64>, dims);
        QFETCH(QStringList, symbols);
        QFETCH(QString, shape);
        QFETCH(bool, asked);
        QFETCH(QString, read);
        QFETCH(QString, symbol);
        OnnxBuilder b;
        std::vector<std::string> names;
        for (const QString& n : symbols)
            names.push_back(n.toStdString());
        b.input("x", std::vector<int64_t>(dims.begin(), dims.end()), onnx::TensorProto::FLOAT, names)
            .output("y", std::vector<int64_t>(dims.size(), -1));
        b.node("Relu", {"x"}, {"y"}, "relu");
        ImportOptions o;
        o.oneSampleForSymbolicBatch = asked;
        if (!shape.isEmpty())
            addInputShape(o, shape.toStdString());
        const Model m = loadOnnxFromBytes(b.bytes(), "batch.onnx", {}, o);
        QCOMPARE(QString::fromStdString(m.graph.value(m.graph.findValue("x")).type.shape->toString()), read);
        if (symbol == "-") {
            QVERIFY(m.oneSampleInputs.empty());
            return;
        }
        QCOMPARE(int(m.oneSampleInputs.size()), 1);
        QCOMPARE(m.oneSampleInputs[0].name, std::string("x"));
        QCOMPARE(QString::fromStdString(m.oneSampleInputs[0].batchSymbol), symbol);
        // Sized through: the output is known and nothing warns.
        QCOMPARE(m.graph.value(m.graph.findValue("y")).type.toString(), std::string("float[1x3x8x8]"));
        QVERIFY2(m.warnings.empty(), m.warnings.empty() ? "" : m.warnings.front().c_str());
    }

    void shapeOverrideErrors_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown input") << "nope=1,3,8,8" << "not a graph input";
        QTest::newRow("initializer") << "w=4,3,3,3" << "not a graph input";
        QTest::newRow("wrong rank") << "x=1,3,8" << "3 dimensions";
        QTest::newRow("bad number") << "x=1,3,a,8" << "bad dimension";
        QTest::newRow("negative") << "x=1,3,-8,8" << "bad dimension";
        QTest::newRow("no name") << "=1,3" << "NAME=DIMS";
    }

    void shapeOverrideErrors()
    {
        QFETCH(QString, spec);
        QFETCH(QString, message);
        try {
            ImportOptions o;
            addInputShape(o, spec.toStdString());
            loadOnnxFromBytes(symbolicConvModel().bytes(), "sym.onnx", {}, o);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Usage);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
        }
    }

    void externalDataIsFollowed()
    {
        QTemporaryDir dir;
        OnnxBuilder b;
        b.input("x", {2, 3}).output("y");
        b.node("Add", {"x", "w"}, {"y"}, "add");
        auto* w = b.model().mutable_graph()->add_initializer();
        w->set_name("w");
        w->set_data_type(onnx::TensorProto::FLOAT);
        w->add_dims(2);
        w->add_dims(3);
        w->set_data_location(onnx::TensorProto::EXTERNAL);
        auto kv = [&](const char* k, const char* v) {
            auto* e = w->add_external_data();
            e->set_key(k);
            e->set_value(v);
        };
        kv("location", "weights/w.bin");
        kv("offset", "8");
        kv("length", "24");
        QVERIFY(QDir(dir.path()).mkpath("weights"));
        const float values[8] = {-1, -1, 1, 2, 3, 4, 5, 6};  // 8 bytes of padding, then the tensor
        std::ofstream(dir.filePath("weights/w.bin").toStdString(), std::ios::binary)
            .write(reinterpret_cast<const char*>(values), sizeof values);
        const std::string path = dir.filePath("model.onnx").toStdString();
        std::ofstream(path, std::ios::binary) << b.bytes();

        const Model m = loadOnnx(path);
        const Value& wv = m.graph.value(m.graph.findValue("w"));
        QVERIFY(wv.isConstant());
        QCOMPARE(wv.initializer->data.size(), size_t(24));
        QCOMPARE(wv.initializer->at<float>(0), 1.0f);
        QCOMPARE(wv.initializer->at<float>(5), 6.0f);

        // Asked not to load: the type is kept, the data is not.
        ImportOptions lazy;
        lazy.loadExternalData = false;
        const Model m2 = loadOnnx(path, lazy);
        const Value& w2 = m2.graph.value(m2.graph.findValue("w"));
        QCOMPARE(w2.initializer->externalLocation, std::string("weights/w.bin"));
        QVERIFY(w2.initializer->data.empty());
        QCOMPARE(w2.type.toString(), std::string("float[2x3]"));

        // A data file that is too short is named.
        std::ofstream(dir.filePath("weights/w.bin").toStdString(), std::ios::binary | std::ios::trunc) << "tiny";
        try {
            loadOnnx(path);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::ExternalData);
            QVERIFY2(QString(e.what()).contains("weights/w.bin"), e.what());
        }
    }

    // An If whose branches read an outer value: the node depends on its producer.
    void subgraphOuterValuesAreDependencies()
    {
        OnnxBuilder b;
        b.input("x", {2}).input("cond", {}, onnx::TensorProto::BOOL).output("y");
        b.node("Relu", {"x"}, {"r"}, "relu");
        auto& iff = b.node("If", {"cond"}, {"y"}, "if");
        for (const char* branch : {"then_branch", "else_branch"}) {
            auto* a = iff.add_attribute();
            a->set_name(branch);
            a->set_type(onnx::AttributeProto::GRAPH);
            auto* g = a->mutable_g();
            g->set_name(branch);
            auto* n = g->add_node();
            n->set_op_type(std::string(branch) == "then_branch" ? "Neg" : "Abs");
            n->add_input("r");  // from the outer graph
            n->add_output(std::string(branch) + "_out");
            auto* out = g->add_output();
            out->set_name(std::string(branch) + "_out");
            auto* tt = out->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(onnx::TensorProto::FLOAT);
            tt->mutable_shape()->add_dim()->set_dim_value(2);
        }
        const Model m = loadOnnxFromBytes(b.bytes(), "if.onnx", {});
        const Node& ifNode = m.graph.node(1);
        QCOMPARE(ifNode.opType, std::string("If"));
        QVERIFY(ifNode.hasSubgraphs());
        QCOMPARE(ifNode.implicitInputs.size(), size_t(1));
        QCOMPARE(m.graph.value(ifNode.implicitInputs[0]).name, std::string("r"));
        QCOMPARE(m.graph.predecessors(1), (std::vector<NodeId>{0}));
        const Graph& then = *ifNode.attr("then_branch")->g;
        QCOMPARE(then.nodeCount(), size_t(1));
        QVERIFY(then.value(then.findValue("r")).isOuterScope);
        QCOMPARE(m.graph.nodeCountRecursive(), size_t(4));
    }

    void conformanceSubgraphModelsLoad_data()
    {
        QTest::addColumn<QString>("dir");
        for (const char* d : {"test_if", "test_loop11", "test_scan9_sum", "test_if_seq", "test_loop13_seq"})
            QTest::newRow(d) << QString(d);
    }

    void conformanceSubgraphModelsLoad()
    {
        QFETCH(QString, dir);
        const QString path = test::conformanceDataDir() + "/node/" + dir + "/model.onnx";
        if (!QFile::exists(path))
            QSKIP("libonnx-testdata does not have this test");
        const Model m = loadOnnx(path.toStdString());
        bool found = false;
        for (const Node& n : m.graph.nodes())
            found = found || n.hasSubgraphs();
        QVERIFY(found);
    }

    void unknownDomainLoadsFlagged()
    {
        OnnxBuilder b;
        auto* o = b.model().add_opset_import();
        o->set_domain("com.example");
        o->set_version(1);
        b.input("x", {2, 3}).output("y");
        auto& n = b.node("FancyOp", {"x"}, {"y"}, "fancy");
        n.set_domain("com.example");
        const Model m = loadOnnxFromBytes(b.bytes(), "custom.onnx", {});
        QVERIFY(!m.graph.node(0).schemaKnown);
        QVERIFY(contains(m.warnings, "com.example"));
    }

    void unknownOperatorInStandardDomainIsFlagged()
    {
        OnnxBuilder b;
        b.input("x", {2, 3}).output("y");
        b.node("NoSuchOp", {"x"}, {"y"}, "nope");
        const Model m = loadOnnxFromBytes(b.bytes(), "custom.onnx", {});
        QVERIFY(!m.graph.node(0).schemaKnown);
        QVERIFY(contains(m.warnings, "NoSuchOp"));
    }

    void nodesOutOfOrderAreSorted()
    {
        OnnxBuilder b;
        b.input("x", {2}).output("y");
        b.node("Neg", {"t"}, {"y"}, "second");
        b.node("Relu", {"x"}, {"t"}, "first");
        const Model m = loadOnnxFromBytes(b.bytes(), "unsorted.onnx", {});
        const Topology t = buildTopology(m.graph);
        QCOMPARE(m.graph.node(t.order[0]).name, std::string("first"));
    }
};

QTEST_GUILESS_MAIN(TestOnnxImport)
#include "tst_onnx_import.moc"
