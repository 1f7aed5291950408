#include "core/runtime/torch/compiled_model.h"

#include "core/onnx/node_checks.h"
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/executors.h"
#include "core/analysis/constant_sources.h"
#include "core/analysis/finite_values.h"
#include "core/runtime/torch/torch_errors.h"
#include "core/runtime/torch/winograd.h"
#include "core/util/error.h"
#include "core/util/resources.h"

#include <algorithm>
#include <map>
#include <set>

namespace ramiel {

namespace {

bool isOnnxDomain(const std::string& d)
{
    return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml" || d == "ai.onnx.training" || d == "ai.onnx.preview.training";
}

// The kernel registry's key: ONNX operators by name, other domains as "domain:Op".
std::string registryKey(const Node& n) { return n.domain.empty() ? n.opType : n.domain + ":" + n.opType; }

// Every tensor a run makes whose size is known, and the weights' copy, must fit in
// memory: refused here, before anything is allocated, rather than failing mid-run.
void checkMemory(const Model& model)
{
    const Graph& g = model.graph;
    const uint64_t available = availableMemoryBytes();
    uint64_t weights = 0;
    for (const Value& v : g.values()) {
        if (v.isConstant()) {
            weights += v.initializer->data.size();
            continue;
        }
        if (!v.type.shape || !v.type.shape->isFullyKnown() || elementSize(v.type.dtype) == 0)
            continue;
        const auto bytes = v.type.byteSize();  // none: past int64
        const std::string what = v.producer == kNone ? "input '" + v.name + "' " + v.type.toString()
                                                     : "value '" + v.name + "' " + v.type.toString() + " of node '" +
                                                           g.node(v.producer).name + "'";
        requireMemory(model.path, what, bytes ? uint64_t(*bytes) : UINT64_MAX, available);
    }
    requireMemory(model.path, "a copy of the weights", weights, available);
}

}  // namespace

TorchCompiledModel::TorchCompiledModel(const Model& model) : model_(model), topo_(buildTopology(model_.graph))
{
    const Graph& g = model_.graph;
    const KernelRegistry& registry = kernelRegistry();

    // Every missing operator at once, before anything is prepared or run.
    std::map<std::string, std::string> missing;  // op -> first node
    for (const Node& n : g.nodes()) {
        if (!registry.count(registryKey(n)))
            missing.emplace(n.domain.empty() ? n.opType : n.domain + "." + n.opType, n.name);
    }
    if (!missing.empty()) {
        std::string list;
        std::set<std::string> foreign;  // domains ONNX does not define
        for (const auto& [op, node] : missing) {
            list += (list.empty() ? "" : ", ") + op + " (node '" + node + "')";
            if (const auto dot = op.rfind('.'); dot != std::string::npos && !isOnnxDomain(op.substr(0, dot)))
                foreign.insert(op.substr(0, dot));
        }
        for (const std::string& d : foreign)
            list += d == "com.microsoft" ? "; com.microsoft operators are ONNX Runtime's contrib operators, not ONNX-standard"
                                         : "; domain '" + d + "' is not ONNX-standard";
        throw Error(ErrorKind::Unsupported, model.path, "the runtime does not implement " + list);
    }
    // Kernels index their inputs and outputs and divide by strides: every node
    // is checked against its schema and the kernels' assumptions first.
    validateNodes(model_);
    checkMemory(model_);

    constants_.resize(g.valueCount());
    for (const Value& v : g.values())
        if (v.isConstant())
            constants_[size_t(v.id)] =
                withTorchErrors(ErrorKind::Runtime, model.path, [&] { return constantToATen(v.initializer, "initializer '" + v.name + "'"); });
    for (ValueId v : g.inputs())
        if (!g.value(v).isConstant()) {
            inputIds_.push_back(v);
            const auto& shape = g.value(v).type.shape;
            sampleRows_.push_back(shape && shape->rank() > 0 && shape->dims[0].isKnown() ? shape->dims[0].value : 1);
        }

    const std::vector<bool> finite = finiteWithInputs(g);
    // A node reading a constant through Identity nodes is prepared as one reading the
    // constant (constant_sources.h); the Identity nodes still run.
    const std::vector<ValueId> source = constantSources(g);
    auto constantOf = [&](ValueId v) {
        return v == kNone || source[size_t(v)] == kNone ? at::Tensor() : constants_[size_t(source[size_t(v)])];
    };
    const BlockedLayout layout = blockedLayout(g, source, winogradChoice() != WinogradChoice::Never,
                                               groupedLayoutChoice() != GroupedLayoutChoice::ChannelsLast);
    blocked_ = layout.values;
    kernels_.reserve(g.nodeCount());
    for (const Node& n : g.nodes()) {
        KernelContext ctx{g, n, {}};
        ctx.blockedOutput = !n.outputs.empty() && n.outputs[0] != kNone && blocked_[size_t(n.outputs[0])];
        ctx.blockedStage = layout.stages[size_t(n.id)];
        if (readsFiniteValues(n, finite))
            ctx.finiteRun = &finiteRun_;
        ctx.finiteConstants = std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId v) {
            return v == kNone || source[size_t(v)] == kNone || finite[size_t(v)];
        });
        for (ValueId v : n.inputs)
            ctx.constants.push_back(constantOf(v));
        try {
            kernels_.push_back(registry.at(registryKey(n))(ctx));
        } catch (const Error& e) {
            throw Error(e.kind(), model.path, e.message());
        } catch (...) {
            rethrowAsError(ErrorKind::Unsupported, model.path, "node '" + n.name + "' (" + n.opType + ") cannot be prepared: ");
        }
    }
}

std::vector<int64_t> TorchCompiledModel::sizesOf(ValueId v, const at::Tensor& t) const
{
    return blocked_[size_t(v)] ? logicalSizes(t) : t.sizes().vec();
}

void TorchCompiledModel::runNode(NodeId n, const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) const
{
    try {
        kernels_[size_t(n)](in, out);
    } catch (...) {
        const Node& node = model_.graph.node(n);
        rethrowAsError(ErrorKind::Runtime, model_.path, "node '" + node.name + "' (" + node.opType + ") failed: ", false);
    }
}

void TorchCompiledModel::setInputs(const std::vector<Tensor>& inputs)
{
    const Graph& g = model_.graph;
    if (inputs.size() != inputIds_.size())
        throw Error(ErrorKind::Usage, model_.path, "the model takes " + std::to_string(inputIds_.size()) +
                                                       " inputs, " + std::to_string(inputs.size()) + " given");
    int batch = -1;
    std::vector<at::Tensor> converted;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Value& v = g.value(inputIds_[i]);
        const Tensor& t = inputs[i];
        const std::string what = "input '" + v.name + "'";
        if (v.type.dtype != DataType::Undefined && t.dtype != v.type.dtype)
            throw Error(ErrorKind::Usage, model_.path, what + " must be " + dataTypeName(v.type.dtype) + ", got " +
                                                           dataTypeName(t.dtype));
        if (v.type.shape) {
            const Shape& s = *v.type.shape;
            bool ok = s.rank() == t.dims.size();
            int thisBatch = 1;
            for (size_t d = 0; ok && d < s.rank(); ++d) {
                if (!s.dims[d].isKnown())
                    continue;
                if (d == 0 && s.dims[0].value > 0 && t.dims[0] % s.dims[0].value == 0)
                    thisBatch = int(t.dims[0] / s.dims[0].value);
                else
                    ok = s.dims[d].value == t.dims[d];
            }
            if (!ok)
                throw Error(ErrorKind::Usage, model_.path, what + " has shape " + Shape::of(t.dims).toString() +
                                                               ", the model expects " + s.toString() +
                                                               " (the first dimension may be a multiple)");
            if (batch >= 0 && thisBatch != batch)
                throw Error(ErrorKind::Usage, model_.path, what + " holds a batch of " + std::to_string(thisBatch) +
                                                               ", the other inputs " + std::to_string(batch));
            batch = thisBatch;
        }
        requireMemory(model_.path, what, t.data.size());
        converted.push_back(withTorchErrors(ErrorKind::Runtime, model_.path, [&] { return toATen(t, what); }));
    }
    inputs_ = std::move(converted);
    batch_ = std::max(batch, 1);
    finiteRun_.store(std::all_of(inputs_.begin(), inputs_.end(), [](const at::Tensor& t) {
        return !at::isFloatingType(t.scalar_type()) || at::isfinite(t).all().item<bool>();
    }));
}

std::vector<Tensor> TorchCompiledModel::randomInputs(int batch, uint64_t seed) const
{
    const Graph& g = model_.graph;
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    std::vector<Tensor> out;
    for (size_t i = 0; i < inputIds_.size(); ++i) {
        const Value& v = g.value(inputIds_[i]);
        if (!v.type.shape || !v.type.shape->isFullyKnown())
            throw Error(ErrorKind::Usage, model_.path,
                        "input '" + v.name + "' has shape " + v.type.toString() +
                            ": its sizes are not known (set them with --shape NAME=d1,d2,..., in Ramiel Studio's "
                            "Input Sizes, or with an input file)");
        std::vector<int64_t> dims = *v.type.shape->sizes();
        const auto type = scalarTypeOf(v.type.dtype);
        if (!type)
            throw Error(ErrorKind::Unsupported, model_.path, "input '" + v.name + "' has an unsupported element type");
        // The random draw (8 bytes an element at most), its conversion and the copy out.
        int64_t numel = 1;
        bool overflow = !dims.empty() && __builtin_mul_overflow(dims[0], int64_t(batch), &dims[0]);
        for (size_t d = 0; d < dims.size() && !overflow; ++d)
            overflow = __builtin_mul_overflow(numel, dims[d], &numel);
        if (overflow)
            numel = -1;
        requireMemory(model_.path,
                      "input '" + v.name + "' " + v.type.toString() + (batch > 1 ? " at batch " + std::to_string(batch) : ""),
                      byteCount(numel, 8 + 2 * elementSize(v.type.dtype)));
        out.push_back(withTorchErrors(ErrorKind::Runtime, model_.path, [&] {
            at::Tensor t;
            if (at::isFloatingType(*type))
                t = at::randn(dims, gen, at::TensorOptions().dtype(at::kFloat)).to(*type);
            else if (*type == at::kBool)
                t = at::randint(0, 2, dims, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
            else
                t = at::randint(0, 10, dims, gen, at::TensorOptions().dtype(at::kLong)).to(*type);
            return fromATen(t);
        }));
    }
    return out;
}

std::vector<Tensor> TorchCompiledModel::outputs() const
{
    // The copies out come on top of the run's own tensors: checked, not left to the OOM killer.
    uint64_t bytes = 0;
    for (const at::Tensor& t : outputs_)
        bytes += uint64_t(t.numel()) * uint64_t(t.element_size());
    requireMemory(model_.path, "a copy of the outputs", bytes);
    return withTorchErrors(ErrorKind::Runtime, model_.path, [&] {
        std::vector<Tensor> out;
        for (const at::Tensor& t : outputs_)
            out.push_back(fromATen(t));
        return out;
    });
}

std::unique_ptr<Executor> TorchCompiledModel::serialExecutor(int intraOpThreads)
{
    return makeSerialExecutor(*this, intraOpThreads);
}

std::unique_ptr<Executor> TorchCompiledModel::parallelExecutor(const Schedule& schedule)
{
    return makeParallelExecutor(*this, schedule);
}

}  // namespace ramiel
