// Kernels: one per ONNX operator, chosen and prepared once per node when a
// model is compiled (attributes read, constant weights converted and laid
// out), then run many times.
#pragma once

#include "core/ir/graph.h"

#include <ATen/ATen.h>

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace ramiel {

// Inputs in the node's input order (an undefined tensor for an omitted
// optional input); outputs to fill, one per node output.
using Kernel = std::function<void(const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out)>;

// What a kernel factory may look at: the node, its graph, and which inputs
// are constants (available now, already converted).
struct KernelContext {
    const Graph& graph;
    const Node& node;
    std::vector<at::Tensor> constants;  // by input index; undefined when not constant
    bool blockedOutput = false;  // a convolution may leave output 0 blocked (winograd.h)
    bool blockedStage = false;   // a convolution of a blocked stage (winograd.h)
    // True while the node's inputs are finite: set where they are finite whenever the
    // graph's inputs are (core/analysis/finite_values.h), to whether the run's inputs
    // are (TorchCompiledModel::setInputs; false in a subgraph's body, which none reaches);
    // null elsewhere.
    const std::atomic<bool>* finiteRun = nullptr;
    bool finiteConstants = true;  // every constant input's data is finite

    int64_t opset() const { return node.opset; }
    bool hasInput(size_t i) const { return node.input(i) != kNone; }
    bool isConstant(size_t i) const { return i < constants.size() && constants[i].defined(); }
    // Rank of input i when shape inference knows it, else -1.
    int64_t inputRank(size_t i) const;
    [[noreturn]] void unsupported(const std::string& what) const;  // Error(Unsupported) naming the node
    // The element type an attribute names (dtype, output_datatype), `fallback` where the
    // node lacks it; a type the runtime does not have is unsupported().
    std::optional<at::ScalarType> elementTypeAttr(std::string_view name, std::optional<at::ScalarType> fallback) const;
};

using KernelFactory = std::function<Kernel(const KernelContext&)>;
using KernelRegistry = std::map<std::string, KernelFactory>;

// The registry of every operator the runtime implements (default domain).
const KernelRegistry& kernelRegistry();

void registerElementwiseKernels(KernelRegistry& r);
void registerConvolutionKernels(KernelRegistry& r);
void registerNeuralKernels(KernelRegistry& r);
void registerQuantizedKernels(KernelRegistry& r);
void registerShapeKernels(KernelRegistry& r);
void registerIndexingKernels(KernelRegistry& r);
void registerControlFlowKernels(KernelRegistry& r);
void registerRecurrentKernels(KernelRegistry& r);
void registerRandomKernels(KernelRegistry& r);
void registerSignalKernels(KernelRegistry& r);

// The values a node reads, each once: its inputs (omitted ones left out), then
// its implicit inputs (outer values a control-flow body reads).
std::vector<ValueId> distinctReads(const Node& node);

// Helpers shared by the kernel files.
int64_t normalizeAxis(int64_t axis, int64_t rank);
// The values of a small integer tensor (shapes, axes, pads); empty when undefined.
std::vector<int64_t> intsOf(const at::Tensor& t);
// A convolution's or pooling's spatial sizes: an input's past batch and channels,
// a weight's past its output and input channels.
std::vector<int64_t> spatialSizes(const at::Tensor& x);
std::vector<int64_t> kernelFromWeight(const at::Tensor& w);
// A shape for messages: "[2, 3]".
std::string shapeText(at::IntArrayRef s);
// Whether the kernel holds the only reference to t and its storage (the executors
// hand a value's last reader the value itself), so it may write into t.
bool heldOnlyHere(const at::Tensor& t);

}  // namespace ramiel
