// If, Loop and Scan: each body compiled once (CompiledSubgraph) and run as many
// times as the node's semantics ask. A kernel's inputs are the node's inputs
// followed by its implicit inputs, the outer values the bodies read.
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/subgraph.h"
#include "core/util/error.h"

#include <memory>

namespace ramiel {

namespace {

std::shared_ptr<const CompiledSubgraph> body(const KernelContext& c, const char* attribute)
{
    const Attribute* a = c.node.attr(attribute);
    if (!a || !a->g)
        c.unsupported(std::string("lacks the graph attribute '") + attribute + "'");
    return std::make_shared<const CompiledSubgraph>(c.graph, c.node, *a->g, attribute);
}

bool truth(const at::Tensor& t, const char* what)
{
    if (t.numel() != 1)
        throw Error(ErrorKind::Runtime, {}, std::string(what) + " must hold one element, it holds " + std::to_string(t.numel()));
    return t.item().toBool();
}

// Per-iteration slices stacked along a new axis (negative: counted from the end of
// the stacked rank); reversed first when they were made back to front.
at::Tensor stacked(std::vector<at::Tensor> parts, int64_t axis, bool reverse, DataType declared)
{
    if (parts.empty()) {
        const auto type = scalarTypeOf(declared);
        return at::empty({0}, at::TensorOptions().dtype(type ? *type : at::kFloat));
    }
    if (reverse)
        std::reverse(parts.begin(), parts.end());
    return at::stack(parts, normalizeAxis(axis, parts[0].dim() + 1));
}

Kernel ifKernel(const KernelContext& c)
{
    auto thenBranch = body(c, "then_branch"), elseBranch = body(c, "else_branch");
    const size_t outs = c.node.outputs.size();
    for (const auto* b : {thenBranch.get(), elseBranch.get()})
        if (b->inputCount() != 0 || b->outputCount() != outs)
            c.unsupported("a branch takes " + std::to_string(b->inputCount()) + " inputs and makes " +
                          std::to_string(b->outputCount()) + " outputs, the node needs 0 and " + std::to_string(outs));
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const auto& branch = truth(in[0], "the condition") ? thenBranch : elseBranch;
        out = branch->run({}, in);
    };
}

// Loop: M (optional trip count), cond (optional), N loop-carried values; the body
// takes (iteration, cond, N values) and makes (cond, N values, K scan slices).
Kernel loopKernel(const KernelContext& c)
{
    auto b = body(c, "body");
    const size_t n = c.node.inputs.size() - 2, k = c.node.outputs.size() - n;
    if (b->inputCount() != n + 2 || b->outputCount() != 1 + n + k)
        c.unsupported("the body takes " + std::to_string(b->inputCount()) + " inputs and makes " +
                      std::to_string(b->outputCount()) + " outputs, the node needs " + std::to_string(n + 2) + " and " +
                      std::to_string(1 + n + k));
    std::vector<DataType> scanTypes;
    for (size_t j = 0; j < k; ++j)
        scanTypes.push_back(b->outputType(1 + n + j));
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const bool counted = in[0].defined(), conditional = in[1].defined();
        const int64_t trips = counted ? toInt64Vector(in[0]).at(0) : INT64_MAX;
        bool cond = conditional ? truth(in[1], "the condition") : true;
        std::vector<at::Tensor> args(n + 2);
        for (size_t j = 0; j < n; ++j)
            args[2 + j] = in[2 + j];
        std::vector<std::vector<at::Tensor>> scans(k);
        for (int64_t i = 0; i < trips && cond; ++i) {
            args[0] = at::scalar_tensor(i, at::kLong);
            args[1] = at::scalar_tensor(cond, at::kBool);
            std::vector<at::Tensor> r = b->run(args, in);
            if (conditional)  // without a cond input the body's condition is ignored
                cond = truth(r[0], "the body's condition");
            for (size_t j = 0; j < n; ++j)
                args[2 + j] = r[1 + j];
            for (size_t j = 0; j < k; ++j)
                scans[j].push_back(r[1 + n + j]);
        }
        for (size_t j = 0; j < n; ++j)
            out[j] = args[2 + j];
        for (size_t j = 0; j < k; ++j)
            out[n + j] = stacked(std::move(scans[j]), 0, false, scanTypes[j]);
    };
}

struct ScanAxes {
    std::vector<int64_t> inAxes, inReverse, outAxes, outReverse;
};

// One Scan over N states and M scan inputs (opset 9 semantics, no batch axis).
std::vector<at::Tensor> scanOnce(const CompiledSubgraph& b, const ScanAxes& a, const std::vector<at::Tensor>& states,
                                 const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& nodeInputs,
                                 const std::vector<DataType>& scanTypes)
{
    const size_t n = states.size(), m = inputs.size(), k = scanTypes.size();
    std::vector<int64_t> axes(m);
    int64_t length = -1;
    for (size_t j = 0; j < m; ++j) {
        axes[j] = normalizeAxis(a.inAxes[j], inputs[j].dim());
        const int64_t len = inputs[j].size(axes[j]);
        if (length >= 0 && len != length)
            throw Error(ErrorKind::Runtime, {}, "scan input " + std::to_string(j) + " has " + std::to_string(len) +
                                                    " iterations along its axis, scan input 0 has " + std::to_string(length));
        length = len;
    }
    std::vector<at::Tensor> args(states.begin(), states.end());
    args.resize(n + m);
    std::vector<std::vector<at::Tensor>> scans(k);
    for (int64_t t = 0; t < std::max<int64_t>(length, 0); ++t) {
        for (size_t j = 0; j < m; ++j)
            args[n + j] = inputs[j].select(axes[j], a.inReverse[j] ? length - 1 - t : t);
        std::vector<at::Tensor> r = b.run(args, nodeInputs);
        for (size_t j = 0; j < n; ++j)
            args[j] = r[j];
        for (size_t j = 0; j < k; ++j)
            scans[j].push_back(r[n + j]);
    }
    std::vector<at::Tensor> out(args.begin(), args.begin() + long(n));
    for (size_t j = 0; j < k; ++j)
        out.push_back(stacked(std::move(scans[j]), a.outAxes[j], a.outReverse[j] != 0, scanTypes[j]));
    return out;
}

// A list attribute of `count` entries, `fallback` when absent.
std::vector<int64_t> perEntry(const KernelContext& c, const char* name, size_t count, int64_t fallback)
{
    std::vector<int64_t> v = c.node.attrInts(name);
    if (v.empty())
        return std::vector<int64_t>(count, fallback);
    if (v.size() != count)
        c.unsupported("'" + std::string(name) + "' has " + std::to_string(v.size()) + " entries, the node has " +
                      std::to_string(count));
    return v;
}

// Scan: N states then M scan inputs (Scan-8: a sequence_lens input first and a
// batch axis on every input and output); the body takes (N states, M slices)
// and makes (N states, K slices).
Kernel scanKernel(const KernelContext& c)
{
    auto b = body(c, "body");
    const bool batched = c.opset() < 9;
    const size_t first = batched ? 1 : 0;
    const int64_t m64 = c.node.attrInt("num_scan_inputs", 0);
    if (m64 < 1 || size_t(m64) > c.node.inputs.size() - first)
        c.unsupported("num_scan_inputs " + std::to_string(m64) + " must be between 1 and the node's inputs");
    const size_t m = size_t(m64), n = c.node.inputs.size() - first - m;
    if (c.node.outputs.size() < n)
        c.unsupported("the node has fewer outputs than states");
    const size_t k = c.node.outputs.size() - n;
    if (b->inputCount() != n + m || b->outputCount() != n + k)
        c.unsupported("the body takes " + std::to_string(b->inputCount()) + " inputs and makes " +
                      std::to_string(b->outputCount()) + " outputs, the node needs " + std::to_string(n + m) + " and " +
                      std::to_string(n + k));
    ScanAxes a;
    if (batched) {
        a.inAxes.assign(m, 0);
        a.inReverse = perEntry(c, "directions", m, 0);
        a.outAxes.assign(k, 0);
        a.outReverse.assign(k, 0);
    } else {
        a.inAxes = perEntry(c, "scan_input_axes", m, 0);
        a.inReverse = perEntry(c, "scan_input_directions", m, 0);
        a.outAxes = perEntry(c, "scan_output_axes", k, 0);
        a.outReverse = perEntry(c, "scan_output_directions", k, 0);
    }
    std::vector<DataType> scanTypes;
    for (size_t j = 0; j < k; ++j)
        scanTypes.push_back(b->outputType(n + j));
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        auto from = [&](size_t begin, size_t count) {
            return std::vector<at::Tensor>(in.begin() + long(begin), in.begin() + long(begin + count));
        };
        if (!batched) {
            out = scanOnce(*b, a, from(0, n), from(n, m), in, scanTypes);
            return;
        }
        // Scan-8: the body runs per batch entry; every sequence must be full length.
        const std::vector<at::Tensor> states = from(1, n), inputs = from(1 + n, m);
        const int64_t batch = inputs[0].size(0);
        if (in[0].defined())
            for (int64_t len : toInt64Vector(in[0]))
                if (len != inputs[0].size(1))
                    throw Error(ErrorKind::Unsupported, {}, "sequence_lens shorter than the sequence are not supported");
        std::vector<std::vector<at::Tensor>> parts(n + k);
        for (int64_t i = 0; i < batch; ++i) {
            std::vector<at::Tensor> s, x;
            for (const at::Tensor& t : states)
                s.push_back(t.select(0, i));
            for (const at::Tensor& t : inputs)
                x.push_back(t.select(0, i));
            std::vector<at::Tensor> r = scanOnce(*b, a, s, x, in, scanTypes);
            for (size_t j = 0; j < n + k; ++j)
                parts[j].push_back(r[j]);
        }
        for (size_t j = 0; j < n + k; ++j)
            out[j] = at::stack(parts[j], 0);
    };
}

}  // namespace

void registerControlFlowKernels(KernelRegistry& r)
{
    r["If"] = ifKernel;
    r["Loop"] = loopKernel;
    r["Scan"] = scanKernel;
}

}  // namespace ramiel
