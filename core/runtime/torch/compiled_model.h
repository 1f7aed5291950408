// The libtorch CompiledModel: kernels per node, constants converted once,
// and the serial and parallel executors over them.
#pragma once

#include "core/ir/topology.h"
#include "core/runtime/runtime.h"
#include "core/runtime/torch/kernel.h"

namespace ramiel {

class TorchCompiledModel final : public CompiledModel {
public:
    // Throws Error(Unsupported) listing missing operators, Error(InvalidGraph) for a
    // broken node, Error(Resource) for a tensor of known size larger than memory.
    explicit TorchCompiledModel(const Model& model);

    void setInputs(const std::vector<Tensor>& inputs) override;
    std::vector<Tensor> randomInputs(int batch, uint64_t seed) const override;
    std::vector<Tensor> outputs() const override;
    std::unique_ptr<Executor> serialExecutor(int intraOpThreads) override;
    std::unique_ptr<Executor> parallelExecutor(const Schedule& schedule) override;

    // For the executors.
    const Graph& graph() const { return model_.graph; }
    const std::string& path() const { return model_.path; }
    const Topology& topology() const { return topo_; }
    const Kernel& kernel(NodeId n) const { return kernels_[size_t(n)]; }
    const at::Tensor& constant(ValueId v) const { return constants_[size_t(v)]; }
    // The logical sizes of value v's tensor t, also where t is held blocked (winograd.h).
    std::vector<int64_t> sizesOf(ValueId v, const at::Tensor& t) const;
    const std::vector<ValueId>& inputIds() const { return inputIds_; }
    const std::vector<at::Tensor>& inputs() const { return inputs_; }
    int batch() const { return batch_; }
    int64_t sampleRows(size_t input) const { return sampleRows_[input]; }  // dim 0 of one sample
    void setOutputs(std::vector<at::Tensor> outputs) { outputs_ = std::move(outputs); }
    // Runs one node's kernel; a failure becomes Error(Runtime) naming the file and
    // the node (Error(Resource) when memory ran out).
    void runNode(NodeId n, const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) const;

private:
    Model model_;
    Topology topo_;
    std::vector<Kernel> kernels_;
    std::vector<at::Tensor> constants_;  // by value id
    std::vector<bool> blocked_;          // by value id: may be held in a Winograd layout
    std::vector<ValueId> inputIds_;
    std::vector<int64_t> sampleRows_;
    std::vector<at::Tensor> inputs_;
    std::vector<at::Tensor> outputs_;
    int batch_ = 1;
    std::atomic<bool> finiteRun_{false};  // the inputs are finite (setInputs)
};

}  // namespace ramiel
