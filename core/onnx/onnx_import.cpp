#include "core/onnx/onnx_import.h"

#include "core/ir/topology.h"
#include "core/onnx/isolated_inference.h"
#include "core/onnx/legacy_forms.h"
#include "core/onnx/wire_scan.h"
#include "core/util/error.h"
#include "core/util/resources.h"
#include "core/util/text.h"

#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace ramiel {

namespace fs = std::filesystem;

namespace {

// Domains whose operators ONNX's schema registry defines.
bool isStandardDomain(const std::string& d)
{
    return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml" || d == "ai.onnx.training" ||
           d == "ai.onnx.preview.training";
}

struct Context {
    std::string file;
    std::string baseDir;
    const ImportOptions& options;
    std::vector<std::string>& warnings;
    int depth = 0;

    [[noreturn]] void fail(ErrorKind kind, const std::string& message) const { throw Error(kind, file, message); }
};

// Protobuf parses at most 2 GiB; larger models keep their weights in external data.
constexpr uint64_t kMaxProtobufBytes = uint64_t(INT_MAX);

std::string readWholeFile(const std::string& path)
{
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw Error(ErrorKind::Io, path, "no such file");
    if (fs::is_directory(st))
        throw Error(ErrorKind::Io, path, "is a directory, not an ONNX file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(ErrorKind::Io, path, std::string("cannot be opened: ") + std::strerror(errno));
    std::string bytes;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0)
        throw Error(ErrorKind::Io, path, "cannot be read (not a regular file?)");
    // Sized before anything is read: a file larger than memory is refused, not read.
    requireMemory(path, "reading the whole file", uint64_t(size));
    if (uint64_t(size) > kMaxProtobufBytes)
        throw Error(ErrorKind::Resource, path,
                    "is " + formatBytes(double(size)) +
                        ", past the 2 GiB that protobuf can parse (larger models keep their weights in external data)");
    bytes.resize(static_cast<size_t>(size));
    in.seekg(0);
    if (size > 0 && !in.read(bytes.data(), size))
        throw Error(ErrorKind::Io, path, std::string("read failed: ") + std::strerror(errno));
    return bytes;
}

TensorType convertType(const onnx::TypeProto& tp)
{
    TensorType t;
    if (!tp.has_tensor_type())
        return t;  // sequence/map/optional values: not tensors
    const auto& tt = tp.tensor_type();
    t.dtype = dataTypeFromOnnx(tt.elem_type());
    if (tt.has_shape()) {
        Shape s;
        for (const auto& d : tt.shape().dim()) {
            if (d.has_dim_value() && d.dim_value() >= 0)
                s.dims.push_back(Dim::known(d.dim_value()));
            else if (d.has_dim_param() && !d.dim_param().empty())
                s.dims.push_back(Dim::symbolic(d.dim_param()));
            else
                s.dims.push_back(Dim::unknown());
        }
        t.shape = std::move(s);
    }
    return t;
}

// Copies `count` typed proto elements into raw little-endian bytes of `elemBytes` each.
template <typename Src>
void packTyped(const google::protobuf::RepeatedField<Src>& src, int64_t count, int64_t elemBytes, std::string& out)
{
    out.resize(static_cast<size_t>(count * elemBytes));
    for (int64_t i = 0; i < count; ++i) {
        const Src v = src.Get(static_cast<int>(i));
        if (elemBytes == static_cast<int64_t>(sizeof(Src))) {
            std::memcpy(out.data() + i * elemBytes, &v, sizeof(Src));
        } else {  // narrow (int32_data holds int8/uint8/int16/bool/float16 bit patterns)
            const uint64_t wide = static_cast<uint64_t>(v);
            std::memcpy(out.data() + i * elemBytes, &wide, static_cast<size_t>(elemBytes));
        }
    }
}

void loadExternalData(onnx::TensorProto& tp, Tensor& t, int64_t expectedBytes, const std::string& what,
                      const Context& ctx)
{
    std::map<std::string, std::string> kv;
    for (const auto& e : tp.external_data())
        kv[e.key()] = e.value();
    if (!kv.count("location") || kv["location"].empty())
        ctx.fail(ErrorKind::ExternalData, what + " is stored externally but names no location");
    const std::string location = kv["location"];
    t.externalLocation = location;
    if (!ctx.options.loadExternalData)
        return;
    if (ctx.baseDir.empty())
        ctx.fail(ErrorKind::ExternalData,
                 what + " needs external data file '" + location + "', but the model was not loaded from a file");

    const fs::path rel(location);
    bool escapes = rel.is_absolute() || rel.has_root_name() || rel.has_root_directory();
    for (const auto& part : rel)
        if (part == "..")
            escapes = true;
    if (escapes)
        ctx.fail(ErrorKind::ExternalData, what + " names external data file '" + location +
                                              "', which is outside the model's folder (refused)");
    // Links are followed before the check: a 'w.bin' that links to /etc/passwd,
    // or a subfolder that links to /etc, is outside the folder as well.
    std::error_code ec;
    const fs::path folder = fs::weakly_canonical(fs::path(ctx.baseDir), ec);
    if (ec)
        ctx.fail(ErrorKind::ExternalData, what + " needs external data file '" + location +
                                              "', but the model's folder cannot be resolved: " + ec.message());
    const fs::path full = fs::weakly_canonical(folder / rel, ec);
    if (ec)
        ctx.fail(ErrorKind::ExternalData, what + " needs external data file '" + location +
                                              "', which cannot be resolved: " + ec.message());
    if (std::mismatch(folder.begin(), folder.end(), full.begin(), full.end()).first != folder.end())
        ctx.fail(ErrorKind::ExternalData, what + " names external data file '" + location + "', which resolves to " +
                                              full.string() + ", outside the model's folder (refused)");
    if (!fs::is_regular_file(full, ec))
        ctx.fail(ErrorKind::ExternalData, what + " needs external data file '" + location +
                                              "', which does not exist (looked for " + full.string() + ")");
    const auto fileSize = static_cast<int64_t>(fs::file_size(full, ec));
    if (ec)
        ctx.fail(ErrorKind::ExternalData, what + ": cannot read the size of external data file '" + location +
                                              "': " + ec.message());
    // Digits only: "12abc", "-1", " 12" and values past int64 are refused, not read as a prefix.
    auto number = [&](const char* key, int64_t fallback) {
        if (!kv.count(key))
            return fallback;
        const std::string& text = kv[key];
        int64_t v = 0;
        bool ok = !text.empty() && text.size() <= 19;
        for (char c : text)
            ok = ok && c >= '0' && c <= '9';
        for (size_t i = 0; ok && i < text.size(); ++i)
            ok = !__builtin_mul_overflow(v, int64_t(10), &v) && !__builtin_add_overflow(v, int64_t(text[i] - '0'), &v);
        if (!ok)
            ctx.fail(ErrorKind::ExternalData, what + " has external-data " + key + " '" + text +
                                                  "', which is not a whole number of bytes");
        return v;
    };
    const int64_t offset = number("offset", 0);
    int64_t length = number("length", -1);
    if (offset > fileSize)
        ctx.fail(ErrorKind::ExternalData, what + " has external-data offset " + std::to_string(offset) +
                                              ", past the end of '" + location + "', which holds only " +
                                              std::to_string(fileSize) + " bytes");
    if (length < 0)
        length = fileSize - offset;
    if (length > fileSize - offset)
        ctx.fail(ErrorKind::ExternalData, what + " reads " + std::to_string(length) + " bytes from offset " +
                                              std::to_string(offset) + " of '" + location + "', which holds only " +
                                              std::to_string(fileSize) + " bytes");
    if (length != expectedBytes)
        ctx.fail(ErrorKind::ExternalData, what + " has " + std::to_string(length) + " bytes of external data in '" +
                                              location + "', its shape needs " + std::to_string(expectedBytes));
    requireMemory(ctx.file, what + " in '" + location + "'", uint64_t(length));
    std::ifstream in(full, std::ios::binary);
    t.data.resize(static_cast<size_t>(length));
    in.seekg(offset);
    if (!in || (length > 0 && !in.read(t.data.data(), length)))
        ctx.fail(ErrorKind::ExternalData, what + ": cannot read external data file '" + location + "'");
}

std::shared_ptr<const Tensor> convertTensor(onnx::TensorProto& tp, const std::string& what, const Context& ctx)
{
    auto t = std::make_shared<Tensor>();
    t->dtype = dataTypeFromOnnx(tp.data_type());
    for (int64_t d : tp.dims()) {
        if (d < 0)
            ctx.fail(ErrorKind::InvalidGraph, what + " has a negative dimension (" + std::to_string(d) + ")");
        t->dims.push_back(d);
    }
    const int64_t n = t->numel();
    const int64_t es = elementSize(t->dtype);
    int64_t expected = 0;
    if (n < 0 || __builtin_mul_overflow(n, es, &expected))
        ctx.fail(ErrorKind::InvalidGraph, what + " has an impossibly large shape");
    if (t->dtype == DataType::Undefined)
        ctx.fail(ErrorKind::InvalidGraph, what + " has an unknown element type (code " +
                                              std::to_string(tp.data_type()) + ")");
    if (t->dtype == DataType::String)
        return t;  // string tensors carry no numeric data Ramiel uses

    if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
        loadExternalData(tp, *t, expected, what, ctx);
        return t;
    }
    if (tp.has_raw_data()) {
        if (static_cast<int64_t>(tp.raw_data().size()) != expected)
            ctx.fail(ErrorKind::InvalidGraph, what + " holds " + std::to_string(tp.raw_data().size()) +
                                                  " bytes of data, its shape " + t->shape().toString() + " needs " +
                                                  std::to_string(expected));
        t->data = std::move(*tp.mutable_raw_data());
        return t;
    }

    int64_t have = 0;
    const int64_t complexFactor = (t->dtype == DataType::Complex64 || t->dtype == DataType::Complex128) ? 2 : 1;
    switch (t->dtype) {
    case DataType::Float:
    case DataType::Complex64:
        have = tp.float_data_size();
        if (have == n * complexFactor)
            packTyped(tp.float_data(), have, 4, t->data);
        break;
    case DataType::Double:
    case DataType::Complex128:
        have = tp.double_data_size();
        if (have == n * complexFactor)
            packTyped(tp.double_data(), have, 8, t->data);
        break;
    case DataType::Int64:
        have = tp.int64_data_size();
        if (have == n)
            packTyped(tp.int64_data(), have, 8, t->data);
        break;
    case DataType::UInt32:
    case DataType::UInt64:
        have = tp.uint64_data_size();
        if (have == n)
            packTyped(tp.uint64_data(), have, es, t->data);
        break;
    default:  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16
        have = tp.int32_data_size();
        if (have == n)
            packTyped(tp.int32_data(), have, es, t->data);
        break;
    }
    if (have != n * complexFactor)
        ctx.fail(ErrorKind::InvalidGraph, what + " holds " + std::to_string(have) + " values, its shape " +
                                              t->shape().toString() + " needs " + std::to_string(n * complexFactor));
    return t;
}

struct GraphResult {
    std::vector<std::string> freeNames;  // outer-scope names the graph reads
};

GraphResult convertGraph(onnx::GraphProto& gp, Graph& g, Context& ctx, bool isMain);

Attribute convertAttribute(onnx::AttributeProto& ap, const std::string& nodeName, Context& ctx,
                           std::vector<std::string>& freeNames)
{
    Attribute a;
    a.name = ap.name();
    const std::string what = "attribute '" + ap.name() + "' of node '" + nodeName + "'";
    auto subgraph = [&](onnx::GraphProto& sub) {
        auto g = std::make_shared<Graph>();
        ++ctx.depth;
        if (ctx.depth > 64)
            ctx.fail(ErrorKind::InvalidGraph, "subgraphs are nested more than 64 deep");
        GraphResult r = convertGraph(sub, *g, ctx, false);
        --ctx.depth;
        freeNames.insert(freeNames.end(), r.freeNames.begin(), r.freeNames.end());
        return g;
    };
    using T = onnx::AttributeProto;
    switch (ap.type()) {
    case T::FLOAT: a.kind = Attribute::Kind::Float; a.f = ap.f(); break;
    case T::INT: a.kind = Attribute::Kind::Int; a.i = ap.i(); break;
    case T::STRING: a.kind = Attribute::Kind::String; a.s = ap.s(); break;
    case T::TENSOR: a.kind = Attribute::Kind::Tensor; a.t = convertTensor(*ap.mutable_t(), what, ctx); break;
    case T::GRAPH: a.kind = Attribute::Kind::Graph; a.g = subgraph(*ap.mutable_g()); break;
    case T::FLOATS: a.kind = Attribute::Kind::Floats; a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case T::INTS: a.kind = Attribute::Kind::Ints; a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case T::STRINGS: a.kind = Attribute::Kind::Strings; a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
    case T::TENSORS:
        a.kind = Attribute::Kind::Tensors;
        for (auto& t : *ap.mutable_tensors())
            a.tensors.push_back(convertTensor(t, what, ctx));
        break;
    case T::GRAPHS:
        a.kind = Attribute::Kind::Graphs;
        for (auto& sub : *ap.mutable_graphs())
            a.graphs.push_back(subgraph(sub));
        break;
    case T::UNDEFINED:
        a.kind = Attribute::Kind::Undefined;  // no type: node checks refuse it where a schema expects one
        break;
    default:
        // Sparse tensors and type protos.
        a.kind = Attribute::Kind::Other;
        break;
    }
    return a;
}

// An initializer that is also a graph input must match the type the input declares.
void checkDeclaredType(const Value& v, const TensorType& declared, const Context& ctx)
{
    if (!v.initializer)
        return;
    const Tensor& t = *v.initializer;
    if (declared.dtype != DataType::Undefined && declared.dtype != t.dtype)
        ctx.fail(ErrorKind::InvalidGraph, "initializer '" + v.name + "' holds " + dataTypeName(t.dtype) +
                                              ", the graph input of that name declares " + dataTypeName(declared.dtype));
    if (!declared.shape)
        return;
    bool same = declared.shape->rank() == t.dims.size();
    for (size_t i = 0; same && i < t.dims.size(); ++i)
        same = !declared.shape->dims[i].isKnown() || declared.shape->dims[i].value == t.dims[i];
    if (!same)
        ctx.fail(ErrorKind::InvalidGraph, "initializer '" + v.name + "' has shape " + t.shape().toString() +
                                              ", the graph input of that name declares " + declared.shape->toString());
}

GraphResult convertGraph(onnx::GraphProto& gp, Graph& g, Context& ctx, bool isMain)
{
    g.name = gp.name();
    const std::string scope = isMain ? std::string("graph") : "subgraph '" + gp.name() + "'";

    for (auto& init : *gp.mutable_initializer()) {
        if (init.name().empty())
            ctx.fail(ErrorKind::InvalidGraph, "an initializer in the " + scope + " has no name");
        const ValueId v = g.addValue(init.name());
        g.setInitializer(v, convertTensor(init, "initializer '" + init.name() + "'", ctx));
    }
    for (const auto& in : gp.input()) {
        ValueId v = g.findValue(in.name());
        if (v != kNone && g.value(v).isGraphInput)
            ctx.fail(ErrorKind::InvalidGraph, "graph input '" + in.name() + "' is listed twice in the " + scope);
        if (v == kNone)
            v = g.addValue(in.name());
        else if (in.type().has_tensor_type())
            checkDeclaredType(g.value(v), convertType(in.type()), ctx);
        g.addInput(v);
    }

    // Outputs first, so that node order in the file does not matter.
    for (const auto& np : gp.node())
        for (const auto& out : np.output())
            if (!out.empty())
                g.valueNamed(out);

    for (auto& np : *gp.mutable_node()) {
        Node n;
        n.name = np.name();
        n.opType = np.op_type();
        n.domain = np.domain() == "ai.onnx" ? std::string() : np.domain();
        if (n.opType.empty())
            ctx.fail(ErrorKind::InvalidGraph, "a node in the " + scope + " has no operator type");
        for (const auto& in : np.input())
            n.inputs.push_back(in.empty() ? kNone : g.valueNamed(in));
        for (const auto& out : np.output())
            n.outputs.push_back(out.empty() ? kNone : g.findValue(out));
        std::vector<std::string> nodeFree;
        for (auto& ap : *np.mutable_attribute())
            n.attributes.push_back(convertAttribute(ap, np.name().empty() ? np.op_type() : np.name(), ctx, nodeFree));
        const NodeId id = g.addNode(std::move(n));
        for (const std::string& name : nodeFree)
            g.addImplicitInput(id, g.valueNamed(name));
    }

    for (const auto& out : gp.output()) {
        const ValueId v = g.findValue(out.name());
        if (v == kNone && isMain)
            ctx.fail(ErrorKind::InvalidGraph, "graph output '" + out.name() + "' is never produced");
        g.addOutput(v == kNone ? g.addValue(out.name()) : v);
    }

    // Types: declared inputs/outputs and inferred value_info.
    auto applyType = [&](const onnx::ValueInfoProto& vi) {
        const ValueId v = g.findValue(vi.name());
        if (v != kNone && !g.value(v).isConstant() && vi.has_type())
            g.value(v).type = convertType(vi.type());
    };
    for (const auto& vi : gp.value_info())
        applyType(vi);
    for (const auto& vi : gp.input())
        applyType(vi);
    for (const auto& vi : gp.output())
        applyType(vi);

    // Values nobody defines: an error in the main graph, outer-scope reads in a subgraph.
    GraphResult result;
    for (size_t i = 0; i < g.valueCount(); ++i) {
        Value& v = g.value(static_cast<ValueId>(i));
        if (v.producer != kNone || v.isGraphInput || v.isConstant())
            continue;
        if (isMain) {
            if (v.consumers.empty())
                ctx.fail(ErrorKind::InvalidGraph, "graph output '" + v.name + "' is never produced");
            const Node& user = g.node(v.consumers.front());
            ctx.fail(ErrorKind::InvalidGraph, "value '" + v.name + "' used by node '" + user.name + "' (" +
                                                  user.opType +
                                                  ") is never produced: no node, graph input or initializer "
                                                  "defines it");
        }
        v.isOuterScope = true;
        result.freeNames.push_back(v.name);
    }
    return result;
}

void applyInputShapes(onnx::GraphProto& gp, const ImportOptions& options, const Context& ctx,
                      std::vector<OneSampleInput>& oneSample)
{
    std::set<std::string> initializerNames;
    for (const auto& init : gp.initializer())
        initializerNames.insert(init.name());
    std::string inputList;
    for (const auto& in : gp.input())
        if (!initializerNames.count(in.name()))
            inputList += (inputList.empty() ? "'" : ", '") + in.name() + "'";

    for (const auto& [name, dims] : options.inputShapes) {
        onnx::ValueInfoProto* target = nullptr;
        for (auto& in : *gp.mutable_input())
            if (in.name() == name && !initializerNames.count(name))
                target = &in;
        if (!target)
            throw Error(ErrorKind::Usage, ctx.file,
                        "--shape names '" + name + "', which is not a graph input (inputs: " + inputList + ")");
        if (!target->type().has_tensor_type())
            throw Error(ErrorKind::Usage, ctx.file, "--shape names '" + name + "', which is not a tensor input");
        auto* shape = target->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() != 0 && shape->dim_size() != static_cast<int>(dims.size()))
            throw Error(ErrorKind::Usage, ctx.file,
                        "--shape gives input '" + name + "' " + std::to_string(dims.size()) +
                            " dimensions, the model declares " + std::to_string(shape->dim_size()));
        shape->clear_dim();
        for (int64_t d : dims)
            shape->add_dim()->set_dim_value(d);
    }
    std::set<std::string> sizedFromData;
    for (auto& in : *gp.mutable_input()) {
        if (!options.openInputSizes || initializerNames.count(in.name()) || options.inputShapes.count(in.name()) ||
            !in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
            continue;
        auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        // A symbolic batch stays for the one-sample rule below: the data's first axis counts samples.
        const int first = options.oneSampleForSymbolicBatch && shape->dim_size() >= 2 && !shape->dim(0).has_dim_value();
        bool open = false;
        for (int d = first; d < shape->dim_size(); ++d)
            open |= !shape->dim(d).has_dim_value();
        const auto sizes = open ? options.openInputSizes(in.name()) : std::nullopt;
        if (!sizes || shape->dim_size() != static_cast<int>(sizes->size()))
            continue;
        for (int d = first; d < shape->dim_size(); ++d)
            if (!shape->dim(d).has_dim_value())
                shape->mutable_dim(d)->set_dim_value((*sizes)[size_t(d)]);
        if (!first)
            sizedFromData.insert(in.name());
    }
    if (options.oneSampleForSymbolicBatch)
        for (auto& in : *gp.mutable_input()) {
            if (initializerNames.count(in.name()) || options.inputShapes.count(in.name()) || sizedFromData.count(in.name()) ||
                !in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
                continue;
            auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
            if (shape->dim_size() < 2 || shape->dim(0).has_dim_value())
                continue;
            bool restKnown = true;
            for (int d = 1; d < shape->dim_size(); ++d)
                restKnown &= shape->dim(d).has_dim_value();
            if (!restKnown)
                continue;
            oneSample.push_back({in.name(), shape->dim(0).dim_param()});
            shape->mutable_dim(0)->set_dim_value(1);
        }
    if (!options.inputShapes.empty() || !oneSample.empty() || !sizedFromData.empty())
        gp.clear_value_info();  // stale symbolic shapes would conflict with the new sizes
}

// Flags nodes whose operator ONNX's registry does not know (they still load).
void checkSchemas(Graph& g, const std::map<std::string, int64_t>& opsets, std::map<std::string, int>& unknownDomains,
                  std::map<std::string, int>& unknownOps)
{
    for (size_t i = 0; i < g.nodeCount(); ++i) {
        Node& n = g.node(static_cast<NodeId>(i));
        if (!isStandardDomain(n.domain)) {
            const auto it = opsets.find(n.domain);
            n.opset = it == opsets.end() ? 0 : it->second;
            n.schemaKnown = false;
            ++unknownDomains[n.domain];
        } else {
            const auto it = opsets.find(n.domain);
            const int64_t version = it == opsets.end() ? 0 : it->second;
            n.opset = version;
            if (version <= 0 || !onnx::OpSchemaRegistry::Schema(n.opType, static_cast<int>(version), n.domain)) {
                n.schemaKnown = false;
                ++unknownOps[(n.domain.empty() ? std::string() : n.domain + ".") + n.opType + " (opset " +
                             std::to_string(version) + ")"];
            }
        }
        for (const Attribute& a : n.attributes) {
            if (a.g)
                checkSchemas(*a.g, opsets, unknownDomains, unknownOps);
            for (const auto& sub : a.graphs)
                if (sub)
                    checkSchemas(*sub, opsets, unknownDomains, unknownOps);
        }
    }
}

void checkAcyclic(const Graph& g)
{
    buildTopology(g);
    for (const Node& n : g.nodes())
        for (const Attribute& a : n.attributes) {
            if (a.g)
                checkAcyclic(*a.g);
            for (const auto& sub : a.graphs)
                if (sub)
                    checkAcyclic(*sub);
        }
}

void warnAboutShapes(Model& model)
{
    const Graph& g = model.graph;
    std::vector<std::string> symbolicInputs;
    for (ValueId id : g.inputs()) {
        const Value& v = g.value(id);
        if (!v.isConstant() && (!v.type.shape || !v.type.shape->isFullyKnown()))
            symbolicInputs.push_back("'" + v.name + "' " + v.type.toString());
    }
    size_t unknown = 0;
    std::string example;
    for (const Value& v : g.values()) {
        if (v.isConstant() || v.isOuterScope)
            continue;
        if (!v.type.shape || !v.type.shape->isFullyKnown()) {
            if (example.empty())
                example = v.name;
            ++unknown;
        }
    }
    auto& warnings = model.warnings;
    for (const std::string& s : symbolicInputs)
        warnings.push_back("input " + s + " has dimensions that are not fixed; set them with --shape NAME=d1,d2,...");
    if (unknown)
        warnings.push_back(std::to_string(unknown) + " of " + std::to_string(g.valueCount()) +
                           " values have no fully known shape after shape inference (e.g. '" + example +
                           "'); the costs of nodes that touch them are unknown");
}

Model convert(std::string_view bytes, const std::string& displayName, const std::string& baseDir,
              const ImportOptions& options)
{
    Model model;
    model.path = displayName;
    Context ctx{displayName, baseDir, options, model.warnings};

    if (bytes.empty())
        ctx.fail(ErrorKind::NotOnnx, "file is empty");
    if (bytes.size() > kMaxProtobufBytes)
        ctx.fail(ErrorKind::Resource, "is " + formatBytes(double(bytes.size())) +
                                          ", past the 2 GiB that protobuf can parse (larger models keep their "
                                          "weights in external data)");
    if (const std::string problem = scanModelWireFormat(bytes); !problem.empty())
        ctx.fail(ErrorKind::NotOnnx, problem);
    onnx::ModelProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        ctx.fail(ErrorKind::NotOnnx, "not a valid ONNX model: the protobuf data inside is corrupt");
    if (!proto.has_graph())
        ctx.fail(ErrorKind::NotOnnx, "not an ONNX model: the file holds no graph");
    if (proto.opset_import_size() == 0)
        ctx.fail(ErrorKind::NotOnnx, "not a valid ONNX model: it imports no operator set (file truncated?)");
    if (proto.graph().node_size() == 0)
        ctx.fail(ErrorKind::InvalidGraph, "graph is empty: it has no nodes");

    model.irVersion = proto.ir_version();
    model.producerName = proto.producer_name();
    model.producerVersion = proto.producer_version();
    std::map<std::string, int64_t> opsets;
    for (const auto& o : proto.opset_import()) {
        const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
        model.opsets.push_back({domain, o.version()});
        opsets[domain] = o.version();
    }

    applyInputShapes(*proto.mutable_graph(), options, ctx, model.oneSampleInputs);
    replaceDeprecatedOperators(*proto.mutable_graph(), opsets.count("") ? opsets.at("") : 0, proto.ir_version());

    InferenceRequest inference;
    inference.runChecker = options.runChecker;
    inference.inferShapes = options.inferShapes;
    checkAndInferShapes(proto, inference, model.warnings);

    try {
        convertGraph(*proto.mutable_graph(), model.graph, ctx, true);
        checkAcyclic(model.graph);
    } catch (const Error& e) {
        if (!e.file().empty())
            throw;
        throw Error(e.kind(), displayName, e.message());
    }

    std::map<std::string, int> unknownDomains, unknownOps;
    checkSchemas(model.graph, opsets, unknownDomains, unknownOps);
    rewriteLegacyForms(model.graph);
    for (const auto& [domain, count] : unknownDomains)
        model.warnings.push_back("unknown operator domain '" + domain + "' (" + std::to_string(count) +
                                 " nodes): they load, but their shapes and costs are unknown");
    for (const auto& [op, count] : unknownOps)
        model.warnings.push_back("operator " + op + " is not in ONNX's registry (" + std::to_string(count) +
                                 " nodes)");
    warnAboutShapes(model);
    for (std::string& w : model.warnings)
        w = printable(w);  // they quote names from the file
    return model;
}

}  // namespace

Model loadOnnxFromBytes(std::string_view bytes, const std::string& displayName, const std::string& baseDir,
                        const ImportOptions& options)
{
    return convert(bytes, displayName, baseDir, options);
}

std::string onnxVersion() { return onnx::LAST_RELEASE_VERSION; }

Model loadOnnx(const std::string& path, const ImportOptions& options)
{
    const std::string bytes = readWholeFile(path);
    std::error_code ec;
    fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
    return convert(bytes, path, dir.string(), options);
}

Tensor readTensorProto(const std::string& path)
{
    const std::string bytes = readWholeFile(path);
    onnx::TensorProto proto;
    if (!proto.ParseFromString(bytes))
        throw Error(ErrorKind::NotOnnx, path, "not a serialized ONNX TensorProto");
    std::vector<std::string> warnings;
    const ImportOptions options;
    const Context ctx{path, fs::absolute(fs::path(path)).parent_path().string(), options, warnings};
    return *convertTensor(proto, "tensor '" + proto.name() + "'", ctx);
}

std::vector<int64_t> parseDims(const std::string& text)
{
    std::vector<int64_t> dims;
    std::string token;
    auto flush = [&] {
        if (token.empty())
            throw Error(ErrorKind::Usage, {}, "bad dimension list '" + text + "' (expected e.g. 1,3,224,224)");
        size_t used = 0;
        long long v = -1;
        try {
            v = std::stoll(token, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != token.size() || v < 0)
            throw Error(ErrorKind::Usage, {}, "bad dimension '" + token + "' in '" + text +
                                                  "' (dimensions are whole numbers >= 0)");
        dims.push_back(v);
        token.clear();
    };
    for (char c : text) {
        if (c == ',' || c == 'x')
            flush();
        else if (c != ' ')
            token += c;
    }
    flush();
    return dims;
}

void addInputShape(ImportOptions& options, const std::string& spec)
{
    const auto eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0)
        throw Error(ErrorKind::Usage, {}, "--shape takes NAME=DIMS (e.g. input=1,3,224,224), got '" + spec + "'");
    options.inputShapes[spec.substr(0, eq)] = parseDims(spec.substr(eq + 1));
}

}  // namespace ramiel
