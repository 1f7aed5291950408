#include "core/codegen/program.h"

#include "core/ir/fused_ops.h"
#include "core/onnx/node_checks.h"
#include "core/schedule/validator.h"
#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/npy.h"
#include "core/util/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

namespace ramiel {

CodeLanguage codeLanguageFromName(const std::string& name)
{
    if (name == "python")
        return CodeLanguage::Python;
    if (name == "cpp")
        return CodeLanguage::Cpp;
    throw Error(ErrorKind::Usage, {}, "unknown language '" + printable(name) + "' (known: python, cpp)");
}

namespace codegen {

std::string Program::var(ValueId v, int copy) const
{
    return copy < 0 || schedule.degree == 1 ? valueId[size_t(v)] : copyValueId[size_t(copy)][size_t(v)];
}

std::string Program::outputsVarOf(NodeId node, int copy) const
{
    return outputsVar.at({node, copy < 0 || schedule.degree == 1 ? -1 : copy});
}

int Program::inputIndex(ValueId v) const
{
    for (size_t k = 0; k < low.inputs.size(); ++k)
        if (low.inputs[k] == v)
            return int(k);
    return -1;
}

std::vector<int64_t> Program::inputDims(ValueId v) const
{
    std::vector<int64_t> dims;
    if (const auto& shape = model.graph.value(v).type.shape)
        for (const Dim& d : shape->dims)
            dims.push_back(d.value);
    if (!dims.empty() && dims[0] > 0)
        dims[0] *= schedule.batch;
    return dims;
}

std::string formatReal(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    // Attributes are float32: the shortest text that reads back as the same float ("1e-05").
    // Numbers from 1 up to 1e16 without an exponent ("10.0", "150.0", not "1e+01").
    const bool single = double(float(v)) == v;
    const bool plain = std::abs(v) >= 1 && std::abs(v) < 1e16;
    char buf[64];
    for (int precision = plain ? 0 : 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, plain ? "%.*f" : "%.*g", precision, v);
        const double back = std::strtod(buf, nullptr);
        if (single ? float(back) == float(v) : back == v)
            break;
    }
    std::string s = buf;
    if (s.find_first_of(".eE") == std::string::npos)
        s += ".0";
    return s;
}

bool callsFunction(const Program& p, const std::vector<std::string>& fns)
{
    const std::function<bool(const Expr&)> calls = [&](const Expr& e) {
        return (e.kind == Expr::Kind::Call && std::find(fns.begin(), fns.end(), e.fn) != fns.end()) ||
               std::any_of(e.args.begin(), e.args.end(), calls);
    };
    return std::any_of(p.low.nodeExpr.begin(), p.low.nodeExpr.end(), calls) ||
           std::any_of(p.branches.begin(), p.branches.end(), [&](const auto& f) { return callsFunction(*f->program, fns); });
}

std::string literalElements(const Tensor& t, const Syntax& syntax)
{
    const bool floating = t.dtype == DataType::Float || t.dtype == DataType::Double;
    const auto numbers = t.toDoubles();
    const auto integers = t.toInt64s();
    std::string s;
    for (size_t i = 0; i < (floating ? numbers->size() : integers->size()); ++i)
        s += (i ? ", " : "") + (floating                       ? syntax.real((*numbers)[i])
                                : t.dtype == DataType::Bool ? std::string((*integers)[i] ? syntax.trueWord : syntax.falseWord)
                                                            : syntax.integer((*integers)[i]));
    return s;
}

std::vector<ValueId> readValues(const Graph& g, NodeId id)
{
    const Node& n = g.node(id);
    std::vector<ValueId> read;
    for (ValueId v : n.inputs)
        if (v != kNone)
            read.push_back(v);
    for (ValueId v : n.implicitInputs)
        if (std::find(read.begin(), read.end(), v) == read.end())
            read.push_back(v);
    return read;
}

std::string Renderer::expr(const Expr& e) const
{
    auto join = [&](const char* open, const char* close) {
        std::string s = open;
        for (size_t i = 0; i < e.args.size(); ++i)
            s += (i ? ", " : "") + expr(e.args[i]);
        return s + close;
    };
    switch (e.kind) {
    case Expr::Kind::Value:
        if (!p.low.isConstant(e.value))
            return p.var(e.value, copy);
        return p.inlineConstants ? syntax.tensor(*p.low.constants.at(e.value)) : syntax.weights + p.weightMember.at(e.value);
    case Expr::Kind::Int: return syntax.integer(e.i);
    case Expr::Kind::Float: return syntax.real(e.f);
    case Expr::Kind::Bool: return e.i ? syntax.trueWord : syntax.falseWord;
    case Expr::Kind::Ints: return syntax.ints(e.ints);
    case Expr::Kind::None: return syntax.none;
    case Expr::Kind::List: return join(syntax.listOpen, syntax.listClose);
    case Expr::Kind::Call: {
        const FunctionName& f = functionName(e.fn);
        std::string s = std::string(syntax.python ? f.python : f.cpp) + "(";
        bool first = true;
        for (const Expr& a : e.args) {
            if (syntax.python && a.isDefault)
                continue;  // Python leaves a keyword's default out
            if (!syntax.python && a.pythonOnly)
                continue;
            if (syntax.python && a.cppOnly)
                continue;
            s += first ? "" : ", ";
            first = false;
            if (!syntax.python || a.keyword.empty()) {
                s += expr(a);
                continue;
            }
            s += a.keyword + "=";
            // Window sizes the same along every axis read as one number: stride=2.
            const bool window = a.keyword == "kernel_size" || a.keyword == "stride" || a.keyword == "padding" ||
                                a.keyword == "dilation";
            if (window && a.kind == Expr::Kind::Ints && !a.ints.empty() &&
                std::all_of(a.ints.begin(), a.ints.end(), [&](int64_t v) { return v == a.ints[0]; }))
                s += std::to_string(a.ints[0]);
            else
                s += expr(a);
        }
        return s + ")";
    }
    case Expr::Kind::Method: {
        std::string s = expr(e.args[0]) + "." + e.fn + "(";
        for (size_t i = 1; i < e.args.size(); ++i)
            s += (i > 1 ? ", " : "") + expr(e.args[i]);
        return s + ")";
    }
    case Expr::Kind::Index: return expr(e.args[0]) + "[" + std::to_string(e.i) + "]";
    case Expr::Kind::Slice: {
        const int64_t start = e.ints[0], end = e.ints[1], step = e.ints[2];
        if (!syntax.python)
            return expr(e.args[0]) + ".slice(" + std::to_string(e.i) + ", " + syntax.integer(start) + ", " +
                   (end == Expr::kToEnd ? std::string("INT64_MAX") : syntax.integer(end)) + ", " + std::to_string(step) + ")";
        // Slices of distinct dimensions one inside another read as one subscript: x[:, :, 1:, :-1].
        std::map<int64_t, std::string> ranges;
        const Expr* object = &e;
        for (; object->kind == Expr::Kind::Slice && !ranges.count(object->i); object = &object->args[0]) {
            const int64_t from = object->ints[0], to = object->ints[1], by = object->ints[2];
            ranges[object->i] = (from ? std::to_string(from) : "") + ":" + (to == Expr::kToEnd ? "" : std::to_string(to)) +
                                (by != 1 ? ":" + std::to_string(by) : "");
        }
        std::string s = expr(*object) + "[";
        for (int64_t d = 0; d <= ranges.rbegin()->first; ++d)
            s += (d ? ", " : "") + (ranges.count(d) ? ranges[d] : std::string(":"));
        return s + "]";
    }
    case Expr::Kind::Text: return "\"" + e.fn + "\"";
    case Expr::Kind::Symbol: return e.fn;
    case Expr::Kind::Sizes: return expr(e.args[0]) + (syntax.python ? ".shape" : ".sizes()");
    case Expr::Kind::DType: return syntax.dtype(DataType(e.i));
    case Expr::Kind::IfElse:
        return syntax.python ? "(" + expr(e.args[1]) + " if bool(" + expr(e.args[0]) + ") else " + expr(e.args[2]) + ")"
                             : "(" + expr(e.args[0]) + ".item<bool>() ? " + expr(e.args[1]) + " : " + expr(e.args[2]) + ")";
    case Expr::Kind::Branch: return p.branches.at(size_t(e.i))->name + join("(", ")");
    case Expr::Kind::Function: return p.branches.at(size_t(e.i))->name;
    }
    return syntax.none;
}

std::string fillTemplate(std::string_view text, const std::vector<std::pair<std::string, std::string>>& values)
{
    const std::string_view prefix = "RAMIEL_";
    std::string out;
    std::set<std::string_view> used;
    size_t pos = 0;
    for (size_t at; (at = text.find(prefix, pos)) != std::string_view::npos;) {
        size_t end = at + prefix.size();
        while (end < text.size() && (std::isupper(static_cast<unsigned char>(text[end])) || text[end] == '_'))
            ++end;
        const std::string_view name = text.substr(at, end - at);
        const auto value = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == name; });
        if (value == values.end())
            throw Error(ErrorKind::Internal, {},
                        "code generation: template placeholder " + std::string(name) + " has no value");
        used.insert(name);
        const size_t lineStart = text.rfind('\n', at) + 1;  // npos + 1: the first line
        if (text.find_first_not_of(' ', lineStart) == at && end < text.size() && text[end] == '\n') {
            out.append(text.substr(pos, lineStart - pos)).append(value->second);
            pos = end + 1;
        } else {
            out.append(text.substr(pos, at - pos)).append(value->second);
            pos = end;
        }
    }
    out.append(text.substr(pos));
    for (const auto& [name, _] : values)
        if (!used.count(name))
            throw Error(ErrorKind::Internal, {}, "code generation: the template lacks the placeholder " + name);
    return out;
}

std::vector<WeightEntry> weightLayout(const Program& p, size_t* totalBytes)
{
    std::vector<WeightEntry> entries;
    size_t offset = 64;
    for (ValueId v : p.low.weights) {
        const size_t bytes = p.low.constants.at(v)->data.size();
        entries.push_back({v, offset, bytes});
        offset += (bytes + 63) / 64 * 64;
    }
    if (totalBytes)
        *totalBytes = offset;
    return entries;
}

namespace {

// Variables: graph inputs and `params` (a branch's outer values) by their names, computed values
// by their nodes' names, in topological order (a clash renames the later one). Each copy's are
// "c<copy>_<name>".
void nameValues(Program& p, const std::vector<ValueId>& params)
{
    const Graph& g = p.model.graph;
    const Schedule& s = p.schedule;
    IdentifierPool values;
    std::vector<std::string> base(g.valueCount());
    std::vector<ValueId> order = params;
    for (ValueId v : params)
        base[size_t(v)] = g.value(v).name;
    for (ValueId v : g.inputs())
        if (!p.low.isConstant(v)) {
            base[size_t(v)] = g.value(v).name;
            order.push_back(v);
        }
    for (NodeId id : p.topo.order) {
        const Node& n = g.node(id);
        for (size_t k = 0; k < n.outputs.size(); ++k) {
            const ValueId v = n.outputs[k];
            if (v == kNone || p.low.isConstant(v))
                continue;
            base[size_t(v)] = n.name.empty() ? g.value(v).name
                              : k == 0       ? nodeBaseName(n.name)
                                             : nodeBaseName(n.name) + "_" + std::to_string(k);
            order.push_back(v);
        }
    }
    p.valueId.resize(g.valueCount());
    for (ValueId v : order)
        p.valueId[size_t(v)] = values.make(base[size_t(v)]);
    if (s.degree > 1) {
        p.copyValueId.assign(size_t(s.degree), std::vector<std::string>(g.valueCount()));
        for (int copy = 0; copy < s.degree; ++copy)
            for (ValueId v : order)
                p.copyValueId[size_t(copy)][size_t(v)] = values.make(p.valueId[size_t(v)], "c" + std::to_string(copy) + "_");
    }
    // C++: the vector a node of several outputs gives, before its parts are moved out, named
    // after the first of them it gives.
    for (NodeId id : p.topo.order)
        if (p.low.outputCount[size_t(id)] > 1) {
            const auto& outs = g.node(id).outputs;
            const ValueId first = *std::find_if(outs.begin(), outs.end(), [](ValueId v) { return v != kNone; });
            for (int copy = -1; copy < s.degree; ++copy)
                if (copy == -1 || s.degree > 1)
                    p.outputsVar[{id, copy}] = values.make(p.valueId[size_t(first)] + "_outputs",
                                                           copy < 0 ? std::string() : "c" + std::to_string(copy) + "_");
        }
}

// The functions of p's If branches and Loop bodies, each the program of its own graph, run
// serially with its constants as literals (a branch's are a few numbers: thresholds, axes), then
// their own branches'. `functions`: the file's branch function names.
void buildBranches(Program& p, IdentifierPool& functions)
{
    for (const LoweredBranch& b : p.low.branches) {
        auto f = std::make_unique<BranchFunction>();
        const Node& ifNode = p.model.graph.node(b.node);
        f->name = functions.make(nodeBaseName(ifNode.name), b.body ? "body_" : b.then ? "then_" : "else_");
        f->then = b.then;
        f->body = b.body;
        f->opType = ifNode.opType;
        f->ifName = ifNode.name;
        f->params = b.outer;
        f->model = std::make_unique<Model>();
        f->model->path = p.model.path;
        f->model->opsets = p.model.opsets;
        f->model->graph = *b.graph;
        const size_t own = b.body ? b.graph->inputs().size() : 0;  // a body's own inputs come first
        for (size_t k = 0; k < b.outer.size(); ++k) {  // the outer values' types, as the enclosing graph knows them
            TensorType& type = f->model->graph.value(b.outer[k]).type;
            if (k < own) {  // a Loop's iteration and condition (scalars), carried values and scan slices:
                            // the enclosing value's type, never its shape (which may change)
                if (type.dtype == DataType::Undefined)
                    type.dtype = b.params[k] != kNone ? p.model.graph.value(b.params[k]).type.dtype
                                 : k == 0             ? DataType::Int64
                                                      : DataType::Bool;
                if (b.params[k] == kNone && !type.shape)
                    type.shape = Shape::of({});
            } else if (!type.shape || type.dtype == DataType::Undefined) {
                type = p.model.graph.value(b.params[k]).type;
            }
        }
        f->topo = buildTopology(f->model->graph);
        f->schedule.batch = p.schedule.batch;
        f->program = std::make_unique<Program>(*f->model, f->topo, f->schedule);
        Program& bp = *f->program;
        bp.low = lowerModel(*f->model, p.schedule.batch);
        bp.inlineConstants = true;
        for (ValueId v : bp.low.weights) {
            const Tensor& t = *bp.low.constants.at(v);
            const bool literal = t.dtype == DataType::Float || t.dtype == DataType::Double || t.dtype == DataType::Int8 ||
                                 t.dtype == DataType::UInt8 || t.dtype == DataType::Int16 || t.dtype == DataType::Int32 ||
                                 t.dtype == DataType::Int64 || t.dtype == DataType::Bool;
            if (!literal || t.numel() > kMaxLiteralElements)
                throw Error(ErrorKind::Unsupported, p.model.path,
                            "code generation: " + ifNode.opType + " '" + printable(ifNode.name) + "': constant '" +
                                printable(bp.model.graph.value(v).name) + "' inside a branch (" + dataTypeName(t.dtype) +
                                ", " + std::to_string(t.numel()) + " elements) is not written as a literal (numbers, at most " +
                                std::to_string(kMaxLiteralElements) + ")");
        }
        nameValues(bp, f->params);
        buildBranches(bp, functions);
        p.branches.push_back(std::move(f));
    }
}

}  // namespace

Program buildProgram(const CodegenRequest& request)
{
    const Model& model = *request.model;
    const Graph& g = model.graph;
    const Schedule& s = *request.schedule;
    Program p(model, *request.topo, s);
    p.low = lowerModel(model, s.batch);
    {
        IdentifierPool functions;
        buildBranches(p, functions);
    }

    nameValues(p, {});
    IdentifierPool members;
    // Weights by their names, except those the exporter made up ("onnx::Conv_542"): those by
    // their first reader and what it reads them as ("inception3a_branch1_conv_weight").
    for (ValueId v : p.low.weights) {
        std::string name = g.value(v).name;
        const auto& readers = g.value(v).consumers;
        if ((name.empty() || name.rfind("onnx::", 0) == 0) && !readers.empty() && !g.node(readers.front()).name.empty()) {
            const Node& n = g.node(readers.front());
            const size_t k = size_t(std::find(n.inputs.begin(), n.inputs.end(), v) - n.inputs.begin());
            static const std::map<std::string, std::vector<const char*>> roles = {
                {"Conv", {"", "weight", "bias"}},
                {kFusedConv, {"", "weight", "bias"}},
                {"Gemm", {"", "weight", "bias"}},
                {"MatMul", {"", "weight"}},
                {"BatchNormalization", {"", "weight", "bias", "running_mean", "running_var"}},
            };
            const auto role = roles.find(n.opType);
            name = nodeBaseName(n.name) + "_" +
                   (role != roles.end() && k < role->second.size() && k > 0 ? std::string(role->second[k])
                                                                             : "input" + std::to_string(k));
        }
        p.weightMember[v] = members.make(name);
    }
    {
        IdentifierPool classes;
        p.className = classes.make(className(std::filesystem::path(model.path).stem().string()));
    }
    p.bound = request.bound;
    std::vector<std::string> outputNames;
    for (ValueId v : g.outputs())
        outputNames.push_back(g.value(v).name);
    p.outputFiles = uniqueFileNames(outputNames, ".npy");  // as `ramiel run --save-outputs` names them

    int offset = 0;
    for (int n : s.subBatch) {
        p.copyOffset.push_back(offset);
        offset += n;
    }

    // Which clusters hold each instance (owner or clone).
    std::vector<std::vector<int>> holders(s.instanceCount());
    for (size_t c = 0; c < s.clusters.size(); ++c)
        for (InstanceId i : s.clusters[c])
            holders[size_t(i)].push_back(int(c));
    auto holds = [&](int cluster, InstanceId i) {
        const auto& h = holders[size_t(i)];
        return std::find(h.begin(), h.end(), cluster) != h.end();
    };

    // Published instances get a slot: a consumer in a cluster that does not hold them, or a graph output.
    std::map<std::pair<ValueId, int>, int> slotOf;
    std::vector<InstanceId> byRank(s.instanceCount());
    for (size_t i = 0; i < s.instanceCount(); ++i)
        byRank[size_t(s.rank[i])] = InstanceId(i);
    for (InstanceId i : byRank) {
        const Node& n = g.node(s.node(i));
        if (p.low.nodeExpr[size_t(n.id)].kind == Expr::Kind::None)
            continue;  // Constant: its value is a weight
        for (ValueId out : computedValues(g, p.low, n.id)) {
            if (out == kNone)
                continue;
            bool publish = g.value(out).isGraphOutput;
            for (NodeId consumer : g.value(out).consumers)
                for (int c : holders[size_t(s.instance(consumer, s.copy(i)))])
                    publish = publish || !holds(c, i);
            if (publish)
                slotOf[{out, s.copy(i)}] = p.slotCount++;
        }
    }

    p.clusters.resize(s.clusters.size());
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        std::set<std::pair<ValueId, int>> available;
        std::vector<Step>& steps = p.clusters[c];
        for (InstanceId i : s.clusters[c]) {
            const Node& n = g.node(s.node(i));
            const int copy = s.copy(i);
            if (p.low.nodeExpr[size_t(n.id)].kind == Expr::Kind::None)
                continue;
            for (ValueId v : readValues(g, n.id)) {
                if (p.low.isConstant(v) || available.count({v, copy}))
                    continue;
                Step step;
                step.value = v;
                step.copy = copy;
                if (const int k = p.inputIndex(v); k >= 0) {
                    step.kind = Step::Kind::BindInput;
                    step.input = k;
                } else {
                    const NodeId producer = g.value(v).producer;
                    if (producer == kNone)
                        throw Error(ErrorKind::Unsupported, model.path,
                                    "code generation: value '" + printable(g.value(v).name) + "' has no producer");
                    const InstanceId from = s.instance(producer, copy);
                    const auto slot = slotOf.find({v, copy});
                    if (slot == slotOf.end())
                        throw Error(ErrorKind::Internal, model.path,
                                    "code generation: value '" + printable(g.value(v).name) + "' is needed by cluster " +
                                        std::to_string(c) + " but not published");
                    step.kind = Step::Kind::Wait;
                    step.slot = slot->second;
                    step.otherCluster = s.owner[size_t(from)];
                }
                steps.push_back(step);
                available.insert({v, copy});
            }
            Step compute;
            compute.kind = Step::Kind::Compute;
            compute.node = n.id;
            compute.value = n.outputs[0];
            compute.copy = copy;
            compute.clone = s.isClone(c, i);
            steps.push_back(compute);
            for (ValueId out : computedValues(g, p.low, n.id)) {
                if (out == kNone)
                    continue;
                available.insert({out, copy});
                if (!compute.clone)
                    if (const auto slot = slotOf.find({out, copy}); slot != slotOf.end()) {
                        Step pub;
                        pub.kind = Step::Kind::Publish;
                        pub.value = out;
                        pub.copy = copy;
                        pub.slot = slot->second;
                        steps.push_back(pub);
                    }
            }
        }
        p.threads.push_back(request.schedule->workerThreadsOf(c));
    }

    for (ValueId v : g.outputs()) {
        OutputSource o;
        o.value = v;
        if (p.low.isConstant(v)) {
            o.kind = OutputSource::Kind::Weight;
        } else if (const int k = p.inputIndex(v); k >= 0) {
            o.kind = OutputSource::Kind::Input;
            o.input = k;
        } else {
            for (int copy = 0; copy < s.degree; ++copy)
                o.slots.push_back(slotOf.at({v, copy}));
        }
        p.outputs.push_back(o);
    }
    return p;
}

std::vector<std::vector<VarKey>> lastUses(const std::vector<std::vector<VarKey>>& usesByStatement,
                                          const std::set<VarKey>& keep)
{
    std::map<VarKey, size_t> last;
    for (size_t i = 0; i < usesByStatement.size(); ++i)
        for (const VarKey& k : usesByStatement[i])
            last[k] = i;
    std::vector<std::vector<VarKey>> drops(usesByStatement.size());
    for (const auto& [key, i] : last)
        if (!keep.count(key))
            drops[i].push_back(key);
    return drops;
}

std::vector<std::vector<VarKey>> serialUses(const Program& p, std::vector<NodeId>* nodes)
{
    std::vector<std::vector<VarKey>> uses;
    for (NodeId id : p.topo.order) {
        if (p.low.nodeExpr[size_t(id)].kind == Expr::Kind::None)
            continue;
        nodes->push_back(id);
        std::vector<VarKey> u;
        for (ValueId v : readValues(p.model.graph, id))
            if (!p.low.isConstant(v))
                u.push_back({v, -1});
        uses.push_back(u);
    }
    return uses;
}

std::vector<std::vector<VarKey>> serialDrops(const Program& p, std::vector<NodeId>* nodes)
{
    std::set<VarKey> keep;
    for (ValueId v : p.model.graph.outputs())
        keep.insert({v, -1});
    return lastUses(serialUses(p, nodes), keep);
}

std::vector<std::vector<VarKey>> clusterUses(const Program& p, size_t cluster)
{
    std::vector<std::vector<VarKey>> uses;
    for (const Step& st : p.clusters[cluster]) {
        std::vector<VarKey> u;
        if (st.kind == Step::Kind::Publish)
            u.push_back({st.value, st.copy});
        if (st.kind == Step::Kind::Compute)
            for (ValueId v : readValues(p.model.graph, st.node))
                if (!p.low.isConstant(v))
                    u.push_back({v, st.copy});
        uses.push_back(u);
    }
    return uses;
}

namespace {

std::string weightsBlob(const Program& p, size_t* total)
{
    const auto layout = weightLayout(p, total);
    std::string blob(*total, '\0');
    std::copy(kWeightsMagic.begin(), kWeightsMagic.end(), blob.begin());
    for (const WeightEntry& e : layout) {
        const std::string& data = p.low.constants.at(e.value)->data;
        std::copy(data.begin(), data.end(), blob.begin() + long(e.offset));
    }
    return blob;
}

void writeInto(const std::filesystem::path& dir, const std::string& name, std::string_view content,
               std::vector<std::string>& written)
{
    const std::string path = (dir / name).string();
    writeFileAtomically(path, content);
    written.push_back(path);
}

}  // namespace

}  // namespace codegen

CodegenResult generateCode(const CodegenRequest& request)
{
    using namespace codegen;
    if (!request.model || !request.topo || !request.schedule)
        throw Error(ErrorKind::Internal, {}, "code generation: incomplete request");
    validateNodes(*request.model);  // lowering reads inputs and attributes as the operators define them
    const Validation validation = validate(*request.schedule, *request.topo);
    if (!validation.valid)
        throw Error(ErrorKind::Usage, request.model->path,
                    "code generation refuses an invalid schedule: " +
                        (validation.problems.empty() ? std::string("(no detail)") : validation.problems.front()));
    const Program program = buildProgram(request);  // throws Unsupported before anything is written

    size_t total = 0;
    const std::string blob = weightsBlob(program, &total);
    std::vector<std::pair<std::string, std::string>> files;
    if (request.language == CodeLanguage::Python) {
        files.emplace_back("model.py", renderPython(program, request.command, total));
        files.emplace_back("run.py", renderPythonRun(program, request.command));
    } else {
        files.emplace_back("main.cpp", renderCpp(program, request.command, total));
        files.emplace_back("CMakeLists.txt", renderCMake(program));
    }
    files.emplace_back("README.md", renderReadme(program, request.command, request.language == CodeLanguage::Python));

    const std::filesystem::path dir(request.outputDir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw Error(ErrorKind::Io, request.outputDir,
                    "cannot create the output folder: " + (ec ? ec.message() : std::string("not a folder")));
    CodegenResult result;
    writeInto(dir, "weights.bin", blob, result.files);
    for (const auto& [name, text] : files)
        writeInto(dir, name, text, result.files);
    result.weightBytes = total;
    result.weights = program.low.weights.size();
    result.slots = size_t(program.slotCount);
    return result;
}

}  // namespace ramiel
