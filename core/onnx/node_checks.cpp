#include "core/onnx/node_checks.h"

#include "core/onnx/legacy_forms.h"

#include "core/ir/fused_ops.h"
#include "core/ir/pad_axes.h"
#include "core/ir/split_parts.h"
#include "core/ir/window.h"
#include "core/util/error.h"

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace ramiel {

namespace {

using onnx::AttributeProto;
using onnx::OpSchema;

// Domains whose operators ONNX's schema registry defines (as in onnx_import.cpp).
bool isOnnxDomain(const std::string& d)
{
    return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml" || d == "ai.onnx.training" ||
           d == "ai.onnx.preview.training";
}

const char* typeName(AttributeProto::AttributeType t)
{
    switch (t) {
    case AttributeProto::FLOAT: return "a float";
    case AttributeProto::INT: return "an int";
    case AttributeProto::STRING: return "a string";
    case AttributeProto::TENSOR: return "a tensor";
    case AttributeProto::GRAPH: return "a graph";
    case AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
    case AttributeProto::TYPE_PROTO: return "a type";
    case AttributeProto::FLOATS: return "floats";
    case AttributeProto::INTS: return "ints";
    case AttributeProto::STRINGS: return "strings";
    case AttributeProto::TENSORS: return "tensors";
    case AttributeProto::GRAPHS: return "graphs";
    case AttributeProto::SPARSE_TENSORS: return "sparse tensors";
    case AttributeProto::TYPE_PROTOS: return "types";
    default: return "an unknown type";
    }
}

const char* kindName(Attribute::Kind k)
{
    switch (k) {
    case Attribute::Kind::Float: return "a float";
    case Attribute::Kind::Int: return "an int";
    case Attribute::Kind::String: return "a string";
    case Attribute::Kind::Tensor: return "a tensor";
    case Attribute::Kind::Graph: return "a graph";
    case Attribute::Kind::Floats: return "floats";
    case Attribute::Kind::Ints: return "ints";
    case Attribute::Kind::Strings: return "strings";
    case Attribute::Kind::Tensors: return "tensors";
    case Attribute::Kind::Graphs: return "graphs";
    case Attribute::Kind::Other: return "a sparse tensor or type";
    case Attribute::Kind::Undefined: break;
    }
    return "of no type";
}

bool kindMatches(Attribute::Kind k, AttributeProto::AttributeType t)
{
    using K = Attribute::Kind;
    switch (t) {
    case AttributeProto::FLOAT: return k == K::Float;
    case AttributeProto::INT: return k == K::Int;
    case AttributeProto::STRING: return k == K::String;
    case AttributeProto::TENSOR: return k == K::Tensor;
    case AttributeProto::GRAPH: return k == K::Graph;
    case AttributeProto::FLOATS: return k == K::Floats;
    case AttributeProto::INTS: return k == K::Ints;
    case AttributeProto::STRINGS: return k == K::Strings;
    case AttributeProto::TENSORS: return k == K::Tensors;
    case AttributeProto::GRAPHS: return k == K::Graphs;
    case AttributeProto::SPARSE_TENSOR:
    case AttributeProto::SPARSE_TENSORS:
    case AttributeProto::TYPE_PROTO:
    case AttributeProto::TYPE_PROTOS: return k == K::Other;  // import keeps no detail of these
    default: return false;
    }
}

// OpSchema keeps "allows unchecked attributes" private: ask its Verify() with a
// node that satisfies everything else and carries one attribute it does not define.
bool allowsUncheckedAttributes(const OpSchema& schema)
{
    static std::mutex mutex;
    static std::map<const OpSchema*, bool> cache;
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(&schema); it != cache.end())
        return it->second;
    onnx::NodeProto probe;
    probe.set_op_type(schema.Name());
    probe.set_domain(schema.domain());
    for (int i = 0; i < schema.min_input(); ++i)
        probe.add_input("in" + std::to_string(i));
    for (int i = 0; i < schema.min_output(); ++i)
        probe.add_output("out" + std::to_string(i));
    for (const auto& [name, a] : schema.attributes()) {
        if (!a.required)
            continue;
        AttributeProto* p = probe.add_attribute();
        p->set_name(name);
        p->set_type(a.type);
        switch (a.type) {
        case AttributeProto::FLOAT: p->set_f(0); break;
        case AttributeProto::INT: p->set_i(0); break;
        case AttributeProto::STRING: p->set_s(""); break;
        case AttributeProto::TENSOR: p->mutable_t(); break;
        case AttributeProto::GRAPH: p->mutable_g(); break;
        case AttributeProto::FLOATS: p->add_floats(0); break;
        case AttributeProto::INTS: p->add_ints(0); break;
        case AttributeProto::STRINGS: p->add_strings(""); break;
        case AttributeProto::TENSORS: p->add_tensors(); break;
        case AttributeProto::GRAPHS: p->add_graphs(); break;
        default: break;
        }
    }
    AttributeProto* extra = probe.add_attribute();
    extra->set_name("ramiel_probe_attribute");
    extra->set_type(AttributeProto::INT);
    extra->set_i(0);
    bool allowed = false;
    try {
        schema.Verify(probe);
        allowed = true;
    } catch (const std::exception&) {
    }
    cache[&schema] = allowed;
    return allowed;
}

std::string join(const std::vector<int64_t>& v)
{
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// One node's checks. fail() records the first problem; later checks are skipped.
class NodeChecker {
public:
    NodeChecker(const Model& model, const Graph& graph, const Node& node) : model_(model), g_(graph), n_(node) {}

    std::string run()
    {
        if (isOnnxDomain(n_.domain)) {
            checkOnnxSchema();
        } else if (n_.domain == kRamielDomain) {
            checkRamielOperator();
        } else {
            return {};  // a domain nobody here defines: the runtime refuses it as unsupported
        }
        if (problem_.empty())
            checkRuntimeRules();
        return problem_;
    }

private:
    const Model& model_;
    const Graph& g_;
    const Node& n_;
    std::string problem_;

    bool failed() const { return !problem_.empty(); }
    void fail(const std::string& rule)
    {
        if (problem_.empty())
            problem_ = "node '" + n_.name + "' (" + (n_.domain.empty() ? "" : n_.domain + ".") + n_.opType + "): " + rule;
    }

    // --- values

    // The dimensions of input i: an initializer's, or a fully known inferred shape.
    std::optional<std::vector<int64_t>> dims(size_t i) const
    {
        const ValueId v = n_.input(i);
        if (v == kNone)
            return std::nullopt;
        const Value& val = g_.value(v);
        if (val.initializer)
            return val.initializer->dims;
        if (val.type.shape && val.type.shape->isFullyKnown())
            return val.type.shape->sizes();
        return std::nullopt;
    }
    // Rank of input i, -1 when unknown.
    int64_t rank(size_t i) const
    {
        const ValueId v = n_.input(i);
        if (v == kNone)
            return -1;
        const Value& val = g_.value(v);
        if (val.initializer)
            return int64_t(val.initializer->dims.size());
        return val.type.shape ? int64_t(val.type.shape->rank()) : -1;
    }
    // Size of dimension d of input i, -1 when unknown.
    int64_t dimSize(size_t i, int64_t d) const
    {
        const ValueId v = n_.input(i);
        if (v == kNone || d < 0)
            return -1;
        const Value& val = g_.value(v);
        if (val.initializer)
            return size_t(d) < val.initializer->dims.size() ? val.initializer->dims[size_t(d)] : -1;
        if (val.type.shape && size_t(d) < val.type.shape->rank() && val.type.shape->dims[size_t(d)].isKnown())
            return val.type.shape->dims[size_t(d)].value;
        return -1;
    }
    const Tensor* constant(size_t i) const
    {
        const ValueId v = n_.input(i);
        if (v == kNone || !g_.value(v).initializer || !g_.value(v).initializer->hasData())
            return nullptr;
        return g_.value(v).initializer.get();
    }
    std::optional<std::vector<int64_t>> constantInts(size_t i) const
    {
        const Tensor* t = constant(i);
        return t ? t->toInt64s() : std::nullopt;
    }
    std::string inputName(size_t i) const
    {
        const ValueId v = n_.input(i);
        return v == kNone ? std::string("(omitted)") : "'" + g_.value(v).name + "'";
    }

    // --- schemas

    void checkOnnxSchema()
    {
        const std::string domainName = n_.domain.empty() ? std::string("ONNX") : n_.domain;
        if (n_.opset <= 0) {
            fail("the model imports no valid version of the " + domainName + " operator set (opset " +
                 std::to_string(n_.opset) + ")");
            return;
        }
        const int version = int(std::min<int64_t>(n_.opset, INT_MAX));
        const OpSchema* schema = onnx::OpSchemaRegistry::Schema(n_.opType, version, n_.domain);
        if (!schema) {
            // Unknown to ONNX at any version: not ours to judge (the runtime refuses what it lacks).
            if (const OpSchema* later = onnx::OpSchemaRegistry::Schema(n_.opType, INT_MAX, n_.domain))
                fail("the operator does not exist in opset " + std::to_string(n_.opset) + " (" + domainName +
                     " defines it from opset " + std::to_string(later->since_version()) + ")");
            return;
        }
        // An opset newer than this ONNX release knows: its latest schema may lack
        // inputs and attributes added since, so only what can't have loosened is checked.
        const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
        const auto range = known.find(n_.domain);
        const bool newer = range != known.end() && n_.opset > range->second.second;
        checkAgainst(*schema, {}, newer);
        if (!newer && !failed())
            checkInputTypes(*schema);
    }

    // Arity, empty required inputs and outputs, attributes. `extra`: attributes
    // beyond the schema's (Ramiel's own), already checked by the caller.
    // `newer`: the schema may be older than the node's opset: only the minimum
    // counts and the types of the attributes it defines are checked. `moreInputs`:
    // inputs the node may have past the schema's (FusedConv's summand).
    void checkAgainst(const OpSchema& schema, const std::set<std::string>& extra, bool newer = false,
                      int moreInputs = 0)
    {
        auto range = [](int lo, int hi) {
            if (hi == INT_MAX)
                return "at least " + std::to_string(lo);
            if (lo == hi)
                return std::to_string(lo);
            return std::to_string(lo) + " to " + std::to_string(hi);
        };
        const int ins = int(n_.inputs.size()), outs = int(n_.outputs.size());
        if (ins < schema.min_input() || (!newer && ins > schema.max_input() + moreInputs))
            return fail("has " + std::to_string(ins) + (ins == 1 ? " input" : " inputs") + ", the operator takes " +
                        range(schema.min_input(), schema.max_input() + moreInputs));
        if (outs < schema.min_output() || (!newer && outs > schema.max_output()))
            return fail("has " + std::to_string(outs) + (outs == 1 ? " output" : " outputs") +
                        ", the operator produces " + range(schema.min_output(), schema.max_output()));
        const auto& formalIn = schema.inputs();
        for (size_t i = 0; i < n_.inputs.size() && i < formalIn.size(); ++i)
            if (n_.inputs[i] == kNone && formalIn[i].GetOption() == OpSchema::Single)
                return fail("input " + std::to_string(i) + " (" + formalIn[i].GetName() +
                            ") is required but left empty");
        const auto& formalOut = schema.outputs();
        for (size_t i = 0; i < n_.outputs.size() && i < formalOut.size(); ++i)
            if (n_.outputs[i] == kNone && formalOut[i].GetOption() == OpSchema::Single)
                return fail("output " + std::to_string(i) + " (" + formalOut[i].GetName() +
                            ") is required but left empty");

        std::set<std::string> seen;
        for (const Attribute& a : n_.attributes) {
            if (!seen.insert(a.name).second)
                return fail("attribute '" + a.name + "' is given twice");
            if (extra.count(a.name))
                continue;
            const auto it = schema.attributes().find(a.name);
            if (it == schema.attributes().end()) {
                if (newer || (a.name.size() >= 2 && a.name[0] == '_' && a.name[1] == '_') ||
                    allowsUncheckedAttributes(schema))
                    continue;
                return fail("has attribute '" + a.name + "', which the operator does not define");
            }
            if (!kindMatches(a.kind, it->second.type))
                return fail("attribute '" + a.name + "' is " + kindName(a.kind) + ", the operator needs " +
                            typeName(it->second.type));
        }
        for (const auto& [name, a] : schema.attributes())
            if (a.required && !newer && !seen.count(name))
                return fail("lacks the required attribute '" + name + "'");
    }

    // The element type of input i where known (an initializer's, a declared or inferred type).
    DataType inputType(size_t i) const
    {
        const ValueId v = n_.input(i);
        if (v == kNone)
            return DataType::Undefined;
        const Value& val = g_.value(v);
        return val.initializer ? val.initializer->dtype : val.type.dtype;
    }

    // Each input's element type where known, against the types its formal parameter allows,
    // and the inputs that share a type parameter (Add's two T) against each other. ONNX's
    // shape inference runs without its type checks (isolated_inference.cpp), and a kernel
    // given a type its operator does not define may still answer: Where with a float
    // condition did, where ONNX Runtime refuses the model.
    void checkInputTypes(const OpSchema& schema)
    {
        const auto& formal = schema.inputs();
        std::map<std::string, std::pair<DataType, size_t>> bound;  // type parameter -> first type, input
        for (size_t i = 0; i < n_.inputs.size() && !formal.empty(); ++i) {
            if (i >= formal.size() && formal.back().GetOption() != OpSchema::Variadic)
                break;
            const auto& f = formal[std::min(i, formal.size() - 1)];
            const DataType t = inputType(i);
            if (t == DataType::Undefined)
                continue;
            const std::string name = dataTypeName(t);
            const auto& allowed = f.GetTypes();
            if (!allowed.count(onnx::Utils::DataTypeUtils::ToType("tensor(" + name + ")"))) {
                std::vector<std::string> names;
                for (const auto* a : allowed)
                    if (a->rfind("tensor(", 0) == 0)
                        names.push_back(a->substr(7, a->size() - 8));
                std::sort(names.begin(), names.end());
                std::string list;
                for (size_t k = 0; k < names.size(); ++k)
                    list += (k ? ", " : "") + names[k];
                return fail("input " + std::to_string(i) + " (" + f.GetName() + ", " + inputName(i) + ") is " + name +
                            (names.empty() ? ", which the operator does not take there"
                                           : "; the operator takes " + list + " there"));
            }
            const std::string& param = f.GetTypeStr();
            const auto& params = schema.typeConstraintParams();
            const bool isParam = std::any_of(params.begin(), params.end(),
                                             [&](const auto& p) { return p.type_param_str == param; });
            if (!isParam || (f.GetOption() == OpSchema::Variadic && !f.GetIsHomogeneous()))
                continue;
            const auto [it, first] = bound.emplace(param, std::pair{t, i});
            if (!first && it->second.first != t)
                return fail("inputs " + std::to_string(it->second.second) + " (" + inputName(it->second.second) +
                            ") and " + std::to_string(i) + " (" + inputName(i) + ") are " +
                            dataTypeName(it->second.first) + " and " + name + "; the operator needs one type for both");
        }
    }

    // ai.ramiel: FusedConv is Conv (its schema at the model's opset) plus an optional
    // fourth input, the summand, and the activation; Gelu, Silu and HardSwish take one input and no
    // attributes; MatMulAdd takes A, a 2-D B, a bias row of B's columns and optionally a GELU;
    // ChannelShuffle, LayerNormalization, FusedBatchNorm and FusedGroupNorm have checks of their own.
    void checkRamielOperator()
    {
        if (n_.opType == kGelu || n_.opType == kSilu || n_.opType == kHardSwish) {
            if (n_.inputs.size() != 1 || n_.inputs[0] == kNone || n_.outputs.size() != 1)
                return fail(n_.opType + " takes one input and gives one output");
            if (!n_.attributes.empty())
                return fail(n_.opType + " has no attributes; this one has '" + n_.attributes.front().name + "'");
            return;
        }
        if (n_.opType == kMatMulAdd)
            return checkMatMulAdd();
        if (n_.opType == kChannelShuffle)
            return checkChannelShuffle();
        if (n_.opType == kLayerNorm)
            return checkLayerNorm();
        if (n_.opType == kFusedBatchNorm)
            return checkFusedBatchNorm();
        if (n_.opType == kFusedGroupNorm)
            return checkFusedGroupNorm();
        if (n_.opType != kFusedConv)
            return fail("Ramiel's domain " + std::string(kRamielDomain) + " has no operator '" + n_.opType + "'");
        const int64_t opset = model_.opsetVersion("");
        const OpSchema* conv = onnx::OpSchemaRegistry::Schema("Conv", opset > 0 ? int(std::min<int64_t>(opset, INT_MAX)) : 11, "");
        if (!conv)
            return fail("no Conv schema to check it against");
        const Attribute* act = n_.attr("activation");
        const bool summand = n_.inputs.size() > 3;
        if (!act && !summand)
            return fail("lacks the required attribute 'activation'");
        if (summand && n_.inputs[3] == kNone)
            return fail("input 3 (the summand) is left empty");
        if (!act) {  // a convolution plus its summand alone
            if (n_.attr("activation_params"))
                return fail("has activation_params but no activation");
            return checkAgainst(*conv, {"activation_params"}, false, 1);
        }
        if (!checkActivation(*act))
            return;
        checkAgainst(*conv, {"activation", "activation_params"}, false, 1);
    }

    // A fused node's activation: a string naming one of FusedConv's, with as many
    // activation_params as it takes. False after a failure.
    bool checkActivation(const Attribute& act)
    {
        if (act.kind != Attribute::Kind::String) {
            fail("attribute 'activation' is " + std::string(kindName(act.kind)) + ", it needs a string");
            return false;
        }
        size_t params = 0;
        if (act.s == "LeakyRelu")
            params = 1;
        else if (act.s == "Clip")
            params = 2;
        else if (act.s != "Relu" && act.s != "Sigmoid" && act.s != "HardSwish" && act.s != "Silu") {
            fail("activation '" + act.s + "' is not one of Relu, LeakyRelu, Sigmoid, HardSwish, Clip, Silu");
            return false;
        }
        const Attribute* p = n_.attr("activation_params");
        if (p && p->kind != Attribute::Kind::Floats) {
            fail("attribute 'activation_params' is " + std::string(kindName(p->kind)) + ", it needs floats");
            return false;
        }
        const size_t given = p ? p->floats.size() : 0;
        if (given != params) {
            fail("activation " + act.s + " takes " + std::to_string(params) + " activation_params, " +
                 std::to_string(given) + " given");
            return false;
        }
        return true;
    }

    // FusedBatchNorm: one or more parts, then scale, B, mean and variance, none left
    // empty; one output; epsilon a finite float of at least 0; an optional activation.
    // The parameters of one dimension, as many as the parts have channels where known.
    void checkFusedBatchNorm()
    {
        if (n_.inputs.size() < 5 || n_.outputs.size() != 1 || n_.outputs[0] == kNone)
            return fail("FusedBatchNorm takes one or more inputs and then scale, B, mean and variance, and gives one output");
        for (size_t i = 0; i < n_.inputs.size(); ++i)
            if (n_.inputs[i] == kNone)
                return fail("input " + std::to_string(i) + " is left empty");
        for (const Attribute& a : n_.attributes) {
            if (a.name != "epsilon" && a.name != "activation" && a.name != "activation_params")
                return fail("FusedBatchNorm has the attributes epsilon, activation and activation_params, not '" + a.name + "'");
            if (a.name == "epsilon" && a.kind != Attribute::Kind::Float)
                return fail("attribute 'epsilon' is " + std::string(kindName(a.kind)) + ", it needs a float");
            if (a.name == "epsilon" && !(a.f >= 0.0f && std::isfinite(a.f)))
                return fail("epsilon " + std::to_string(a.f) + " is not a finite value of at least 0");
        }
        const Attribute* act = n_.attr("activation");
        if (!act && n_.attr("activation_params"))
            return fail("has activation_params but no activation");
        if (act && !checkActivation(*act))
            return;
        const size_t parts = n_.inputs.size() - 4;
        int64_t channels = 0;
        for (size_t i = 0; i < parts; ++i) {
            const int64_t r = rank(i);
            if (r >= 0 && r < 2)
                return fail("input " + std::to_string(i) + " has rank " + std::to_string(r) + ", FusedBatchNorm needs 2 or more");
            const int64_t c = dimSize(i, 1);
            if (c < 0 || channels < 0 || __builtin_add_overflow(channels, c, &channels))
                channels = -1;
        }
        for (size_t i = parts; i < n_.inputs.size(); ++i) {
            const int64_t r = rank(i);
            if (r >= 0 && r != 1)
                return fail("input " + std::to_string(i) + " has rank " + std::to_string(r) + ", a statistic of one dimension");
            const int64_t c = dimSize(i, 0);
            if (channels >= 0 && c >= 0 && c != channels)
                return fail("input " + std::to_string(i) + " has " + std::to_string(c) + " values for " +
                            std::to_string(channels) + " channels");
        }
    }

    // FusedGroupNorm: X, scale and bias, none left empty; one output; num_groups an int
    // >= 1 dividing X's channels, epsilon a finite float of at least 0, an optional
    // activation. X of rank 2 or more; scale and bias of one dimension, one value per channel.
    void checkFusedGroupNorm()
    {
        if (n_.inputs.size() != 3 || n_.outputs.size() != 1 || n_.outputs[0] == kNone)
            return fail("FusedGroupNorm takes three inputs (X, scale, bias) and gives one output");
        for (size_t i = 0; i < n_.inputs.size(); ++i)
            if (n_.inputs[i] == kNone)
                return fail("input " + std::to_string(i) + " is left empty");
        for (const Attribute& a : n_.attributes) {
            if (a.name != "num_groups" && a.name != "epsilon" && a.name != "activation" && a.name != "activation_params")
                return fail("FusedGroupNorm has the attributes num_groups, epsilon, activation and activation_params, not '" +
                            a.name + "'");
            if (a.name == "num_groups" && a.kind != Attribute::Kind::Int)
                return fail("attribute 'num_groups' is " + std::string(kindName(a.kind)) + ", it needs an int");
            if (a.name == "epsilon" && a.kind != Attribute::Kind::Float)
                return fail("attribute 'epsilon' is " + std::string(kindName(a.kind)) + ", it needs a float");
            if (a.name == "epsilon" && !(a.f >= 0.0f && std::isfinite(a.f)))
                return fail("epsilon " + std::to_string(a.f) + " is not a finite value of at least 0");
        }
        const Attribute* groups = n_.attr("num_groups");
        if (!groups)
            return fail("lacks the required attribute 'num_groups'");
        if (groups->i < 1)
            return fail("num_groups " + std::to_string(groups->i) + " is below 1");
        const Attribute* act = n_.attr("activation");
        if (!act && n_.attr("activation_params"))
            return fail("has activation_params but no activation");
        if (act && !checkActivation(*act))
            return;
        const int64_t r = rank(0);
        if (r >= 0 && r < 2)
            return fail("input " + inputName(0) + " has rank " + std::to_string(r) + ", FusedGroupNorm needs 2 or more");
        const int64_t channels = dimSize(0, 1);
        if (channels >= 0 && channels % groups->i)
            return fail("num_groups " + std::to_string(groups->i) + " does not divide the " + std::to_string(channels) +
                        " channels of " + inputName(0));
        for (size_t i = 1; i < 3; ++i) {
            const int64_t ri = rank(i);
            if (ri >= 0 && ri != 1)
                return fail("input " + std::to_string(i) + " " + inputName(i) + " has rank " + std::to_string(ri) +
                            ", it must hold one value per channel (rank 1)");
            const int64_t c = dimSize(i, 0);
            if (channels >= 0 && c >= 0 && c != channels)
                return fail("input " + std::to_string(i) + " " + inputName(i) + " holds " + std::to_string(c) +
                            " values, " + inputName(0) + " has " + std::to_string(channels) + " channels");
        }
    }

    // ChannelShuffle: inputs of rank 4 concatenated along channels; an int group
    // >= 1 dividing the channels; one split entry >= 1 per output, summing to them.
    void checkChannelShuffle()
    {
        if (n_.inputs.empty() || n_.outputs.empty())
            return fail("ChannelShuffle takes at least one input and gives at least one output");
        for (size_t i = 0; i < n_.inputs.size(); ++i)
            if (n_.inputs[i] == kNone)
                return fail("input " + std::to_string(i) + " is left empty");
        for (size_t i = 0; i < n_.outputs.size(); ++i)
            if (n_.outputs[i] == kNone)
                return fail("output " + std::to_string(i) + " is left empty");
        for (const Attribute& a : n_.attributes)
            if (a.name != "group" && a.name != "split")
                return fail("ChannelShuffle has the attributes group and split, not '" + a.name + "'");
        const Attribute* group = n_.attr("group");
        if (!group)
            return fail("lacks the required attribute 'group'");
        if (group->kind != Attribute::Kind::Int)
            return fail("attribute 'group' is " + std::string(kindName(group->kind)) + ", it needs an int");
        if (group->i < 1)
            return fail("group " + std::to_string(group->i) + " is below 1");
        const Attribute* split = n_.attr("split");
        if (!split)
            return fail("lacks the required attribute 'split'");
        if (split->kind != Attribute::Kind::Ints)
            return fail("attribute 'split' is " + std::string(kindName(split->kind)) + ", it needs ints");
        if (split->ints.size() != n_.outputs.size())
            return fail("split " + join(split->ints) + " has " + std::to_string(split->ints.size()) + " entries for " +
                        std::to_string(n_.outputs.size()) + " outputs");
        int64_t total = 0;
        for (int64_t s : split->ints) {
            if (s < 1)
                return fail("split " + join(split->ints) + " has an entry below 1");
            total += s;
        }
        if (total % group->i)
            return fail("split " + join(split->ints) + " sums to " + std::to_string(total) +
                        " channels, which group " + std::to_string(group->i) + " does not divide");
        int64_t channels = 0;
        for (size_t i = 0; i < n_.inputs.size(); ++i) {
            const int64_t r = rank(i);
            if (r >= 0 && r != 4)
                return fail("input " + std::to_string(i) + " has rank " + std::to_string(r) + ", ChannelShuffle takes rank 4");
            const int64_t c = dimSize(i, 1);
            channels = c < 0 || channels < 0 ? -1 : channels + c;
        }
        if (channels >= 0 && channels != total)
            return fail("the inputs have " + std::to_string(channels) + " channels, split " + join(split->ints) +
                        " sums to " + std::to_string(total));
    }

    // --- what the runtime and the code generators assume

    const Attribute* ints(const char* name) const
    {
        const Attribute* a = n_.attr(name);
        return a && a->kind == Attribute::Kind::Ints ? a : nullptr;
    }

    // X, Scale (, B) and one output, as ONNX's LayerNormalization; axis negative, Scale
    // and B of rank -axis and of X's last dimensions where their sizes are known.
    void checkLayerNorm()
    {
        if (n_.inputs.size() < 2 || n_.inputs.size() > 3 || n_.outputs.size() != 1 || n_.outputs[0] == kNone)
            return fail("LayerNormalization takes two or three inputs (X, Scale, B) and gives one output");
        for (size_t i = 0; i < 2; ++i)
            if (n_.inputs[i] == kNone)
                return fail("input " + std::to_string(i) + " is left empty");
        int64_t axis = -1;
        for (const Attribute& a : n_.attributes) {
            if (a.name != "axis" && a.name != "epsilon")
                return fail("LayerNormalization has attributes 'axis' and 'epsilon'; this one has '" + a.name + "'");
            const auto need = a.name == "axis" ? Attribute::Kind::Int : Attribute::Kind::Float;
            if (a.kind != need)
                return fail("attribute '" + a.name + "' is " + std::string(kindName(a.kind)) + ", it needs " +
                            (need == Attribute::Kind::Int ? "an int" : "a float"));
            if (a.name == "axis")
                axis = a.i;
            else if (!(a.f >= 0.0f) || !std::isfinite(a.f))
                return fail("epsilon " + std::to_string(a.f) + " is not a finite value of at least 0");
        }
        if (axis >= 0)
            return fail("axis " + std::to_string(axis) + " must be negative (the last -axis dimensions)");
        const int64_t rx = rank(0);
        if (rx >= 0 && -axis > rx)
            return fail("axis " + std::to_string(axis) + " is out of range for X " + inputName(0) + " of rank " +
                        std::to_string(rx));
        const auto x = dims(0);
        for (size_t i = 1; i < n_.inputs.size(); ++i) {
            if (n_.inputs[i] == kNone)
                continue;
            const auto p = dims(i);
            if (!p)
                continue;
            if (int64_t(p->size()) != -axis)
                return fail((i == 1 ? "Scale " : "B ") + inputName(i) + " has rank " + std::to_string(p->size()) +
                            ", it needs " + std::to_string(-axis));
            for (size_t j = 0; x && j < p->size(); ++j) {
                const int64_t xd = (*x)[x->size() - p->size() + j];
                if (xd >= 0 && (*p)[j] >= 0 && xd != (*p)[j])
                    return fail((i == 1 ? "Scale " : "B ") + inputName(i) + " is not of X's last " +
                                std::to_string(-axis) + " dimensions");
            }
        }
    }

    void checkMatMulAdd()
    {
        if (n_.inputs.size() != 3 || n_.outputs.size() != 1 || n_.outputs[0] == kNone)
            return fail("MatMulAdd takes three inputs (A, B, C) and gives one output");
        for (size_t i = 0; i < 3; ++i)
            if (n_.inputs[i] == kNone)
                return fail("input " + std::to_string(i) + " is left empty");
        for (const Attribute& a : n_.attributes) {
            if (a.name != "activation")
                return fail("MatMulAdd has one attribute, 'activation'; this one has '" + a.name + "'");
            if (a.kind != Attribute::Kind::String)
                return fail("attribute 'activation' is " + std::string(kindName(a.kind)) + ", it needs a string");
            if (a.s != kGelu)
                return fail("activation '" + a.s + "' is not Gelu, the one MatMulAdd takes");
        }
        const int64_t ra = rank(0), rb = rank(1), k = dimSize(1, 0), n = dimSize(1, 1);
        if (rb >= 0 && rb != 2)
            return fail("B " + inputName(1) + " has rank " + std::to_string(rb) + ", it needs 2");
        if (ra >= 0 && ra < 2)
            return fail("A " + inputName(0) + " has rank " + std::to_string(ra) + ", it needs at least 2");
        const int64_t ka = ra >= 2 ? dimSize(0, ra - 1) : -1;
        if (ka >= 0 && k >= 0 && ka != k)
            return fail("A's last dimension " + std::to_string(ka) + " is not B's rows " + std::to_string(k));
        if (const auto c = dims(2); c && n >= 0) {
            const bool row = !c->empty() && c->back() == n && (ra < 0 || int64_t(c->size()) <= ra) &&
                             std::all_of(c->begin(), c->end() - 1, [](int64_t d) { return d == 1; });
            if (!row)
                return fail("C " + inputName(2) + " is not a row of B's " + std::to_string(n) + " columns");
        }
    }

    void allAtLeast(const char* name, int64_t minimum)
    {
        if (const Attribute* a = ints(name))
            for (int64_t v : a->ints)
                if (v < minimum)
                    return fail(std::string(name) + " " + join(a->ints) + ": each must be " +
                                (minimum == 1 ? "positive" : "at least " + std::to_string(minimum)));
    }

    // A window's sizes fit an int (ATen's pooling takes them so; sums and products of
    // int64 ones could overflow): no real model comes near.
    void allBelowIntLimit(const char* name)
    {
        if (const Attribute* a = ints(name))
            for (int64_t v : a->ints)
                if (v > INT_MAX)
                    return fail(std::string(name) + " " + join(a->ints) + ": each must be at most " +
                                std::to_string(INT_MAX));
    }

    void lengthIs(const char* name, size_t want, const char* what)
    {
        if (const Attribute* a = ints(name))
            if (!a->ints.empty() && a->ints.size() != want)
                fail(std::string(name) + " " + join(a->ints) + " has " + std::to_string(a->ints.size()) +
                     " values, " + what + " needs " + std::to_string(want));
    }

    void checkAutoPad()
    {
        const Attribute* a = n_.attr("auto_pad");
        if (a && a->kind == Attribute::Kind::String && a->s != "NOTSET" && a->s != "SAME_UPPER" &&
            a->s != "SAME_LOWER" && a->s != "VALID")
            fail("auto_pad '" + a->s + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    }

    // Kernel, strides, dilations, pads: values and lengths for `d` spatial dimensions (-1: unknown).
    void checkWindow(int64_t d)
    {
        allAtLeast("kernel_shape", 1);
        allAtLeast("strides", 1);
        allAtLeast("dilations", 1);
        allAtLeast("pads", 0);
        for (const char* name : {"kernel_shape", "strides", "dilations", "pads", "output_padding"})
            allBelowIntLimit(name);
        checkAutoPad();
        if (failed() || d < 0)
            return;
        const std::string what = "a window over " + std::to_string(d) + " spatial dimensions";
        lengthIs("kernel_shape", size_t(d), what.c_str());
        lengthIs("strides", size_t(d), what.c_str());
        lengthIs("dilations", size_t(d), what.c_str());
        lengthIs("pads", size_t(2 * d), what.c_str());
    }

    // The window (kernel sizes `kernel`, the node's dilations and pads) fits inside input
    // x padded, along every spatial dimension whose size is known: else there is no output.
    void checkWindowFits(size_t x, const std::vector<int64_t>& kernel)
    {
        const int64_t xRank = rank(x);
        if (xRank < 0 || size_t(xRank) != kernel.size() + 2)
            return;
        std::vector<int64_t> spatial;
        for (int64_t i = 2; i < xRank; ++i)
            spatial.push_back(dimSize(x, i));
        const Window w = windowOf(n_, kernel, spatial);
        for (size_t i = 0; i < kernel.size(); ++i) {
            if (spatial[i] < 0 || i >= w.dilations.size())
                continue;
            const int64_t span = w.dilations[i] * (kernel[i] - 1) + 1, padded = spatial[i] + w.padBegin[i] + w.padEnd[i];
            if (span > padded)
                return fail("the window spans " + std::to_string(span) + " along spatial dimension " + std::to_string(i) +
                            " (kernel " + std::to_string(kernel[i]) + ", dilation " + std::to_string(w.dilations[i]) +
                            "), more than the input's " + std::to_string(spatial[i]) + " with its pads");
        }
    }

    // Conv, FusedConv, ConvTranspose, QLinearConv: x and w are the input indices.
    void checkConvolution(size_t x, size_t w, bool transposed)
    {
        const int64_t group = n_.attrInt("group", 1);
        if (group < 1)
            return fail("group " + std::to_string(group) + " must be positive");
        const int64_t xRank = rank(x), wRank = rank(w);
        if (wRank >= 0 && wRank < 3)
            return fail("weight " + inputName(w) + " has rank " + std::to_string(wRank) +
                        ", a convolution's weight has at least 3 (out, in, kernel...)");
        if (xRank >= 0 && xRank < 3)
            return fail("input " + inputName(x) + " has rank " + std::to_string(xRank) +
                        ", a convolution's input has at least 3 (batch, channels, spatial...)");
        if (xRank >= 0 && wRank >= 0 && xRank != wRank)
            return fail("input " + inputName(x) + " has rank " + std::to_string(xRank) + " but weight " +
                        inputName(w) + " rank " + std::to_string(wRank));
        int64_t d = wRank >= 0 ? wRank - 2 : xRank >= 0 ? xRank - 2 : -1;
        if (d < 0)
            if (const Attribute* k = ints("kernel_shape"))
                d = int64_t(k->ints.size());
        checkWindow(d);
        if (failed())
            return;
        if (transposed && d >= 0) {
            lengthIs("output_padding", size_t(d), "a convolution over that many dimensions");
            allAtLeast("output_padding", 0);
            if (const Attribute* s = ints("output_shape"); s && s->ints.size() < size_t(d))
                return fail("output_shape " + join(s->ints) + " has fewer than " + std::to_string(d) + " values");
            if (failed())
                return;
        }
        const auto wDims = dims(w);
        if (wDims) {
            if (const Attribute* k = ints("kernel_shape"))
                for (size_t i = 0; i < k->ints.size() && i + 2 < wDims->size(); ++i)
                    if (k->ints[i] != (*wDims)[i + 2])
                        return fail("kernel_shape " + join(k->ints) + " differs from weight " + inputName(w) +
                                    "'s shape " + join(*wDims));
            const int64_t outChannels = transposed ? (*wDims)[1] * group : (*wDims)[0];
            const int64_t inChannels = transposed ? (*wDims)[0] : (*wDims)[1] * group;
            if (!transposed && (*wDims)[0] % group != 0)
                return fail("group " + std::to_string(group) + " does not divide the weight's " +
                            std::to_string((*wDims)[0]) + " output channels");
            if (transposed && (*wDims)[0] % group != 0)
                return fail("group " + std::to_string(group) + " does not divide the weight's " +
                            std::to_string((*wDims)[0]) + " input channels");
            const int64_t c = dimSize(x, 1);
            if (c >= 0 && c != inChannels)
                return fail("input " + inputName(x) + " has " + std::to_string(c) + " channels, weight " +
                            inputName(w) + " " + join(*wDims) + " with group " + std::to_string(group) + " takes " +
                            std::to_string(inChannels));
            const size_t b = n_.opType == "QLinearConv" ? 8 : 2;
            if (const auto bDims = dims(b); bDims && (bDims->size() != 1 || (*bDims)[0] != outChannels))
                return fail("bias " + inputName(b) + " has shape " + join(*bDims) + ", the convolution has " +
                            std::to_string(outChannels) + " output channels");
            if (!transposed)
                checkWindowFits(x, std::vector<int64_t>(wDims->begin() + 2, wDims->end()));
        }
    }

    // QLinearConv: the input's and output's scales and zero points are per tensor, the
    // weight's per tensor or per output channel.
    void checkQuantizedConvolutionScales()
    {
        if (failed())
            return;
        auto count = [](const std::vector<int64_t>& d) { return Shape::of(d).numel().value_or(-1); };
        const char* names[] = {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"};
        for (size_t i : {1, 2, 6, 7})
            if (const auto d = dims(i); d && count(*d) != 1)
                return fail("input " + std::to_string(i) + " (" + names[i] + ", " + inputName(i) + ") holds " +
                            std::to_string(count(*d)) + " values; it is per tensor, one value");
        const auto w = dims(3);
        for (size_t i : {4, 5})
            if (const auto d = dims(i); d && count(*d) != 1 && (d->size() != 1 || (w && !w->empty() && (*d)[0] != (*w)[0])))
                return fail("input " + std::to_string(i) + " (" + names[i] + ", " + inputName(i) + ") has shape " + join(*d) +
                            "; it holds one value, or one per output channel" +
                            (w && !w->empty() ? " (" + std::to_string((*w)[0]) + ")" : std::string()));
    }

    void checkPool()
    {
        const int64_t xRank = rank(0);
        if (xRank >= 0 && xRank < 3)
            return fail("input " + inputName(0) + " has rank " + std::to_string(xRank) +
                        ", pooling needs at least 3 (batch, channels, spatial...)");
        checkWindow(xRank >= 0 ? xRank - 2 : -1);
        const Attribute* kernel = ints("kernel_shape");
        if (failed() || !kernel)
            return;
        // A window wholly inside the padding has nothing to pool (ONNX Runtime refuses such
        // pads too).
        if (const Attribute* pads = ints("pads"); pads && pads->ints.size() == 2 * kernel->ints.size())
            for (size_t i = 0; i < pads->ints.size(); ++i)
                if (pads->ints[i] >= kernel->ints[i % kernel->ints.size()])
                    return fail("pads " + join(pads->ints) + " are not all smaller than kernel_shape " + join(kernel->ints));
        checkWindowFits(0, kernel->ints);
    }

    // Scale, bias, mean and variance: vectors of one value per channel.
    void checkPerChannel(size_t first, size_t last)
    {
        const int64_t xRank = rank(0);
        if (xRank >= 0 && xRank < 2)
            return fail("input " + inputName(0) + " has rank " + std::to_string(xRank) +
                        ", normalization needs at least 2 (batch, channels)");
        int64_t channels = dimSize(0, 1);
        for (size_t i = first; i <= last && i < n_.inputs.size(); ++i) {
            const auto d = dims(i);
            const int64_t r = rank(i);
            if (r >= 0 && r != 1)
                return fail("input " + std::to_string(i) + " " + inputName(i) + " has rank " + std::to_string(r) +
                            ", it must hold one value per channel (rank 1)");
            if (!d)
                continue;
            if (channels < 0)
                channels = (*d)[0];
            else if ((*d)[0] != channels)
                return fail("input " + std::to_string(i) + " " + inputName(i) + " holds " + std::to_string((*d)[0]) +
                            " values, the input has " + std::to_string(channels) + " channels");
        }
    }

    void checkRange()
    {
        for (size_t i = 0; i < 3; ++i)
            if (const Tensor* t = constant(i); t && t->numel() != 1)
                return fail("input " + std::to_string(i) + " " + inputName(i) + " holds " + std::to_string(t->numel()) +
                            " values, Range takes scalars");
        if (const Tensor* delta = constant(2))
            if (const auto v = delta->toDoubles(); v && v->size() == 1 && (*v)[0] == 0)
                fail("the step " + inputName(2) + " is 0");
    }

    // Expand's shape broadcasts with the input's: aligned from the right, each pair of
    // dimensions equal or one of them 1.
    void checkExpand()
    {
        const auto shape = constantInts(1);
        if (!shape)
            return;
        for (int64_t s : *shape)
            if (s < 0)
                return fail("shape " + join(*shape) + " has a negative size");
        const int64_t xRank = rank(0), shapeRank = int64_t(shape->size());
        for (int64_t i = 1; i <= std::min(xRank, shapeRank); ++i) {  // i-th dimension from the right
            const int64_t a = dimSize(0, xRank - i), b = (*shape)[size_t(shapeRank - i)];
            if (a >= 0 && a != b && a != 1 && b != 1)
                return fail("input " + inputName(0) + " cannot broadcast to the shape " + join(*shape) + " (" +
                            std::to_string(a) + " against " + std::to_string(b) + ")");
        }
    }

    void checkSplit()
    {
        const int64_t outputs = int64_t(n_.outputs.size());
        if (n_.opset >= 18) {
            if (const Attribute* a = n_.attr("num_outputs"); a && a->kind == Attribute::Kind::Int) {
                if (n_.input(1) != kNone)
                    return fail("has both the input 'split' and num_outputs; ONNX takes one of them");
                if (a->i != outputs)
                    return fail("num_outputs " + std::to_string(a->i) + " for " + std::to_string(outputs) +
                                (outputs == 1 ? " output" : " outputs"));
            }
        }
        std::optional<std::vector<int64_t>> sizes;
        if (n_.opset < 13) {
            if (const Attribute* a = ints("split"); a && !a->ints.empty())
                sizes = a->ints;
        } else if (n_.input(1) != kNone) {
            sizes = constantInts(1);
        }
        if (!sizes) {
            const int64_t r = rank(0), axis = n_.attrInt("axis", 0);
            const int64_t size = r >= 0 && axis >= -r && axis < r ? dimSize(0, axis < 0 ? axis + r : axis) : -1;
            if (n_.input(1) == kNone && size >= 0)
                if (const SplitParts p = splitParts(n_.opset, size, outputs); !p.problem.empty())
                    fail("axis " + std::to_string(axis) + ": " + p.problem);
            return;
        }
        if (sizes->size() != n_.outputs.size())
            return fail("split " + join(*sizes) + " gives " + std::to_string(sizes->size()) + " sizes for " +
                        std::to_string(n_.outputs.size()) + " outputs");
        for (int64_t s : *sizes)
            if (s < 0)
                return fail("split " + join(*sizes) + " has a negative size");
    }

    // ONNX defines Mod of floating-point inputs only as fmod (the sign of the dividend).
    void checkMod()
    {
        if (n_.attrInt("fmod", 0) != 0)
            return;
        const DataType t = inputType(0);
        if (t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16)
            fail("fmod is 0 on " + dataTypeName(t) + " inputs; ONNX defines Mod of floating-point values only with fmod 1");
    }

    void checkPad()
    {
        std::optional<std::vector<int64_t>> pads;
        if (n_.opset < 11) {
            if (const Attribute* a = ints(n_.opset < 2 ? "paddings" : "pads"))
                pads = a->ints;
        } else {
            pads = constantInts(1);
        }
        if (!pads)
            return;
        const int64_t r = rank(0);
        if (n_.opset >= 18 && n_.input(3) != kNone) {  // pads of the axes input 3 names
            const auto axes = constantInts(3);
            std::string problem;
            if (axes && r >= 0 && !padsOfEveryAxis(*pads, *axes, r, problem))
                fail(problem);
            return;
        }
        if (pads->size() % 2 != 0 || (r >= 0 && int64_t(pads->size()) != 2 * r))
            fail("pads " + join(*pads) + " has " + std::to_string(pads->size()) + " values, " +
                 (r >= 0 ? "the input's rank " + std::to_string(r) + " needs " + std::to_string(2 * r)
                         : std::string("it needs two per dimension")));
    }

    void checkSlice()
    {
        std::vector<std::pair<std::string, std::vector<int64_t>>> lists;
        if (n_.opset < 10) {
            for (const char* name : {"starts", "ends", "axes"})
                if (const Attribute* a = ints(name))
                    lists.emplace_back(name, a->ints);
        } else {
            const char* names[] = {"starts", "ends", "axes", "steps"};
            for (size_t i = 1; i <= 4; ++i)
                if (const auto v = constantInts(i))
                    lists.emplace_back(names[i - 1], *v);
        }
        for (const auto& [name, values] : lists) {
            if (values.size() != lists.front().second.size())
                return fail(lists.front().first + " " + join(lists.front().second) + " and " + name + " " +
                            join(values) + " differ in length");
            if (name == "steps" && std::count(values.begin(), values.end(), 0))
                return fail("steps " + join(values) + " has a step of 0");
            if (name == "axes") {
                const int64_t r = rank(0);
                std::set<int64_t> seen;
                for (int64_t a : values)
                    if (!seen.insert(a < 0 && r >= 0 ? a + r : a).second)
                        return fail("axes " + join(values) + " names an axis twice");
            }
        }
    }

    // ONNX's Constant holds exactly one value attribute.
    void checkConstant()
    {
        std::string given;
        int count = 0;
        for (const Attribute& a : n_.attributes)
            if (a.name == "value" || a.name == "sparse_value" || a.name.rfind("value_", 0) == 0)
                given += (count++ ? ", " : "") + a.name;
        if (count == 0)
            fail("holds no value: it needs one of value, value_float(s), value_int(s), value_string(s), sparse_value");
        else if (count > 1)
            fail("holds " + std::to_string(count) + " values (" + given + "); ONNX allows exactly one");
    }

    void checkRuntimeRules()
    {
        const std::string& op = n_.opType;
        const bool onnx = n_.domain.empty();
        if (n_.domain == kRamielDomain && op == kFusedConv)
            return checkConvolution(0, 1, false);
        if (!onnx)
            return;
        if (const std::string why = legacyBroadcastProblem(g_, n_); !why.empty())
            return fail(why);
        if (op == "Conv")
            checkConvolution(0, 1, false);
        else if (op == "ConvTranspose")
            checkConvolution(0, 1, true);
        else if (op == "QLinearConv") {
            checkConvolution(0, 3, false);
            checkQuantizedConvolutionScales();
        }
        else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool")
            checkPool();
        else if (op == "BatchNormalization" && n_.attrInt("spatial", 1) != 0)  // spatial = 0: per activation
            checkPerChannel(1, 4);
        else if (op == "InstanceNormalization")
            checkPerChannel(1, 2);
        else if (op == "Range")
            checkRange();
        else if (op == "Split")
            checkSplit();
        else if (op == "Mod")
            checkMod();
        else if (op == "Expand")
            checkExpand();
        else if (op == "Pad")
            checkPad();
        else if (op == "Slice")
            checkSlice();
        else if (op == "Constant")
            checkConstant();
        else if (op == "LRN" && (n_.attrInt("size", 1) < 1 || n_.attrInt("size", 1) > INT_MAX))
            fail("size " + std::to_string(n_.attrInt("size", 1)) + " must be between 1 and " + std::to_string(INT_MAX));
        else if (op == "DepthToSpace" || op == "SpaceToDepth")
            checkDepthSpace();
        else if (op == "ScatterND" || op == "ScatterElements")
            oneOf("reduction", "none", {"none", "add", "mul", "max", "min"});
        else if (op == "GridSample") {
            oneOf("mode", n_.opset < 20 ? "bilinear" : "linear", {"bilinear", "nearest", "bicubic", "linear", "cubic"});
            oneOf("padding_mode", "zeros", {"zeros", "border", "reflection"});
        } else if (op == "BitShift")
            oneOf("direction", "", {"LEFT", "RIGHT"});
        else if (op == "Gelu")
            oneOf("approximate", "none", {"none", "tanh"});
        else if (op == "GatherND" && n_.attrInt("batch_dims", 0) < 0)
            fail("batch_dims " + std::to_string(n_.attrInt("batch_dims", 0)) + " must not be negative");
        else if (op == "MaxUnpool")
            checkWindow(rank(0) >= 0 ? rank(0) - 2 : -1);
        else if (op == "RoiAlign") {
            oneOf("mode", "avg", {"avg", "max"});
            oneOf("coordinate_transformation_mode", n_.opset < 16 ? "output_half_pixel" : "half_pixel",
                  {"half_pixel", "output_half_pixel"});
        } else if (op == "Einsum" && n_.attrString("equation", "").empty())
            fail("the equation is empty");
        else if (op == "If" || op == "Loop" || op == "Scan")
            checkControlFlow();
    }

    // The bodies' inputs and outputs against the node's (the schema checked that
    // the graph attributes are there and are graphs).
    void checkBody(const char* attribute, size_t inputs, size_t outputs)
    {
        const Attribute* a = n_.attr(attribute);
        if (failed() || !a || !a->g)
            return;
        const Graph& b = *a->g;
        if (b.inputs().size() != inputs || b.outputs().size() != outputs)
            fail("the " + std::string(attribute) + " takes " + std::to_string(b.inputs().size()) + " inputs and makes " +
                 std::to_string(b.outputs().size()) + " outputs, the node needs " + std::to_string(inputs) + " and " +
                 std::to_string(outputs));
    }

    void checkControlFlow()
    {
        const size_t ins = n_.inputs.size(), outs = n_.outputs.size();
        if (n_.opType == "If") {
            checkBody("then_branch", 0, outs);
            return checkBody("else_branch", 0, outs);
        }
        if (n_.opType == "Loop") {
            if (n_.input(0) == kNone && n_.input(1) == kNone)
                return fail("has neither a trip count nor a condition: it would never end");
            if (outs < ins - 2)
                return fail("has " + std::to_string(outs) + " outputs, fewer than its " + std::to_string(ins - 2) +
                            " loop-carried values");
            return checkBody("body", ins, 1 + outs);
        }
        // Scan: N states then M scan inputs (Scan-8: sequence_lens first).
        const size_t first = n_.opset < 9 ? 1 : 0;
        const int64_t m = n_.attrInt("num_scan_inputs", 0);
        if (m < 1 || size_t(m) > ins - first)
            return fail("num_scan_inputs " + std::to_string(m) + " must be between 1 and " + std::to_string(ins - first));
        const size_t n = ins - first - size_t(m);
        if (outs < n)
            return fail("has " + std::to_string(outs) + " outputs, fewer than its " + std::to_string(n) + " states");
        const std::pair<const char*, size_t> lists[] = {{"directions", size_t(m)},
                                                        {"scan_input_axes", size_t(m)},
                                                        {"scan_input_directions", size_t(m)},
                                                        {"scan_output_axes", outs - n},
                                                        {"scan_output_directions", outs - n}};
        for (const auto& [name, count] : lists)
            if (n_.attr(name) && n_.attrInts(name).size() != count)
                return fail("'" + std::string(name) + "' has " + std::to_string(n_.attrInts(name).size()) +
                            " entries, the node needs " + std::to_string(count));
        checkBody("body", ins - first, outs);
    }

    // A string attribute that must be one of `allowed` (its default when absent).
    void oneOf(const char* name, const std::string& fallback, std::initializer_list<const char*> allowed)
    {
        const std::string v = n_.attrString(name, fallback);
        std::string list;
        for (const char* a : allowed) {
            if (v == a)
                return;
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        fail(std::string(name) + " '" + v + "' is not one of " + list);
    }

    void checkDepthSpace()
    {
        const int64_t b = n_.attrInt("blocksize", 0);
        if (b < 1)
            return fail("blocksize " + std::to_string(b) + " must be positive");
        if (n_.opType == "DepthToSpace")
            oneOf("mode", "DCR", {"DCR", "CRD"});
        if (failed())
            return;
        const int64_t r = rank(0);
        if (r >= 0 && r != 4)
            return fail("input " + inputName(0) + " has rank " + std::to_string(r) + ", the operator needs 4 (N, C, H, W)");
        const int64_t c = dimSize(0, 1);
        if (n_.opType == "DepthToSpace" && c >= 0 && c % (b * b) != 0)
            fail("input " + inputName(0) + " has " + std::to_string(c) + " channels, not a multiple of blocksize² " +
                 std::to_string(b * b));
    }
};

void validateGraph(const Model& model, const Graph& g)
{
    for (const Node& n : g.nodes()) {
        if (const std::string problem = nodeProblem(model, g, n); !problem.empty())
            throw Error(ErrorKind::InvalidGraph, model.path, problem);
        for (const Attribute& a : n.attributes) {
            if (a.g)
                validateGraph(model, *a.g);
            for (const auto& sub : a.graphs)
                if (sub)
                    validateGraph(model, *sub);
        }
    }
}

}  // namespace

std::string nodeProblem(const Model& model, const Graph& graph, const Node& node)
{
    return NodeChecker(model, graph, node).run();
}

void validateNodes(const Model& model) { validateGraph(model, model.graph); }

}  // namespace ramiel
