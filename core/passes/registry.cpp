#include "core/passes/registry.h"

#include "core/onnx/node_checks.h"
#include "core/passes/passes.h"
#include "core/util/error.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace ramiel::passes {

const std::vector<PassInfo>& registeredPasses()
{
    // The order is the order a pipeline runs in.
    static const std::vector<PassInfo> table = {
        // First: removing pass-through nodes lets every later pattern see producer -> consumer directly.
        {"eliminate-identity",
         "Remove Identity, inference-mode Dropout and no-op Reshape/Transpose/Cast nodes",
         true, {}, makeEliminateIdentityPass},
        // Before the fusions: Clip bounds and normalization parameters often come from Constant nodes.
        {"fold-constants",
         "Evaluate nodes whose inputs are all constant (Constant, shape arithmetic, casts) into initializers",
         true, {}, makeFoldConstantsPass},
        // After folding: a folded shape chain leaves its Shape nodes unread.
        {"dce", "Remove nodes and initializers that reach no graph output", true, {}, makeDeadCodePass},
        // After folding: Pad's pads come from Constant nodes.
        {"fuse-pad", "Fold a Pad of zeros into the next Conv or AveragePool's pads; drop Pads that pad nothing", true,
         {}, makeFusePadPass},
        {"fuse-conv-bn", "Fold BatchNormalization into the preceding Conv's weights and bias", true, {},
         makeFuseConvBatchNormPass},
        // After fuse-conv-bn (a BatchNormalization between Concat and Conv is folded away first) and before
        // fuse-conv-activation, which turns the partial convolutions' Adds into accumulating convolutions.
        {"split-concat-conv",
         "Feed a channel Concat that only a Conv reads (or a MaxPool/AveragePool before one) to it part by part: "
         "partial convolutions summed, no copy",
         true, {}, makeSplitConcatConvPass},
        // Before fuse-conv-activation, which takes the Silu and the HardSwish into the convolution before it.
        {"fuse-silu", "Run a written-out SiLU (Sigmoid, then Mul by its input) as one node (ai.ramiel.Silu)", true, {},
         makeFuseSiluPass},
        {"fuse-hardswish",
         "Run a written-out HardSwish (HardSigmoid 1/6, 1/2, then Mul by its input) as one node (ai.ramiel.HardSwish)",
         true, {}, makeFuseHardSwishPass},
        // After fuse-conv-bn: in Conv -> BatchNormalization -> Relu the Relu follows the Conv only once the
        // BatchNormalization is folded.
        {"fuse-conv-activation",
         "Run Conv (+ Add of a same-shape value) + Relu/LeakyRelu/Sigmoid/HardSwish/Clip/SiLU as one fused node (ai.ramiel.FusedConv)", true, {},
         makeFuseConvActivationPass},
        // After fuse-conv-bn and fuse-conv-activation: what is left are the batch normalizations no
        // convolution precedes (DenseNet's pre-activations), and their activations.
        {"fuse-batchnorm",
         "Run BatchNormalization with the Concat along channels before it and the activation after it as one node "
         "(ai.ramiel.FusedBatchNorm)",
         true, {}, makeFuseBatchNormPass},
        // After folding (the Reshapes' targets come from Shape arithmetic) and fuse-silu (a SiLU after it
        // becomes its activation).
        {"fuse-group-norm",
         "Run a group normalization as PyTorch exports it (Reshape, InstanceNormalization, Reshape, Mul, Add) and "
         "the activation after it as one node (ai.ramiel.FusedGroupNorm)",
         true, {}, makeFuseGroupNormPass},
        // After folding: the constants √2, 1 and 0.5 often come from Constant nodes. Before
        // fuse-matmul-add, which takes a GELU into the linear layer before it.
        {"fuse-gelu", "Run a written-out GELU (Div by sqrt(2), Erf, Add 1, Mul, Mul 0.5) as one node (ai.ramiel.Gelu)",
         true, {}, makeFuseGeluPass},
        // After folding: epsilon and the exponent 2 often come from Constant nodes.
        {"fuse-layer-norm",
         "Run a written-out layer normalization (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) as one "
         "node (ai.ramiel.LayerNormalization)",
         true, {}, makeFuseLayerNormPass},
        {"fuse-matmul-add",
         "Fuse MatMul + Add of a constant into Gemm (2-D), or of a bias row (+ GELU) into one node (ai.ramiel.MatMulAdd)", true,
         {}, makeFuseMatMulAddPass},
        // After folding: the Slices' bounds often come from Shape arithmetic.
        {"fuse-channel-shuffle",
         "Run a channel shuffle (Reshape, Transpose, Reshape) with its Concat and Slices/Split as one node "
         "(ai.ramiel.ChannelShuffle)",
         true, {}, makeFuseChannelShufflePass},
        // Last of the rewrites: it needs BatchNormalization folded into the weights it quantizes and the
        // activations fused (a fused Relu is exact in int8). Off by default: it changes the outputs.
        {"quantize",
         "Int8 Conv/Gemm/MatMul (per-channel symmetric weights, calibrated activations); reports error and speed",
         false, {"fuse-conv-bn", "fuse-conv-activation"}, makeQuantizePass},
    };
    return table;
}

const PassInfo& findPass(const std::string& name)
{
    for (const PassInfo& p : registeredPasses())
        if (p.name == name)
            return p;
    if (name == "clone")
        throw Error(ErrorKind::Usage, {}, "'clone' is not a graph pass but a scheduling option, on by default: "
                                          "--no-clone turns it off");
    std::string known;
    for (const PassInfo& p : registeredPasses())
        known += (known.empty() ? "" : ", ") + p.name;
    throw Error(ErrorKind::Usage, {}, "unknown pass '" + name + "'; known passes: " + known);
}

std::vector<std::string> parsePassList(const std::string& spec)
{
    std::set<std::string> chosen;
    auto addWithRequirements = [&](const std::string& name, auto& self) -> void {
        const PassInfo& p = findPass(name);
        if (!chosen.insert(p.name).second)
            return;
        for (const std::string& r : p.requires)
            self(r, self);
    };
    size_t start = 0;
    while (start <= spec.size()) {
        size_t end = spec.find(',', start);
        if (end == std::string::npos)
            end = spec.size();
        std::string item = spec.substr(start, end - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (item == "default") {
            for (const PassInfo& p : registeredPasses())
                if (p.onByDefault)
                    addWithRequirements(p.name, addWithRequirements);
        } else if (item == "all") {
            for (const PassInfo& p : registeredPasses())
                addWithRequirements(p.name, addWithRequirements);
        } else if (item == "none") {
        } else if (item.empty()) {
            if (spec.find_first_not_of(" \t") != std::string::npos)
                throw Error(ErrorKind::Usage, {}, "--passes '" + spec + "' has an empty item");
        } else {
            addWithRequirements(item, addWithRequirements);
        }
        start = end + 1;
    }
    std::vector<std::string> ordered;
    for (const PassInfo& p : registeredPasses())
        if (chosen.count(p.name))
            ordered.push_back(p.name);
    return ordered;
}

PipelineResult runPipeline(Model& model, const std::vector<std::string>& names, const PassContext& context,
                           const std::function<void(const std::string&, const Model&)>& dump)
{
    for (const std::string& n : names)
        findPass(n);  // an unknown name fails before anything runs
    // Passes read inputs and attributes and constant folding runs kernels:
    // a node that breaks its operator's rules stops here, before any of them.
    validateNodes(model);
    PipelineResult result;
    for (const PassInfo& info : registeredPasses()) {
        if (std::find(names.begin(), names.end(), info.name) == names.end())
            continue;
        const int before = int(model.graph.nodeCount());
        const auto start = std::chrono::steady_clock::now();
        PassStats stats;
        try {
            stats = info.create()->run(model, context);
        } catch (const Error& e) {
            throw Error(e.kind(), e.file().empty() ? model.path : e.file(), "pass " + info.name + ": " + e.message());
        }
        stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        stats.nodesBefore = before;
        stats.nodesAfter = int(model.graph.nodeCount());
        result.stats.emplace_back(info.name, stats);
        if (dump)
            dump(info.name, model);
    }
    return result;
}

std::string describePasses()
{
    size_t width = 0;
    for (const PassInfo& p : registeredPasses())
        width = std::max(width, p.name.size());
    std::string out;
    for (const PassInfo& p : registeredPasses()) {
        std::string line = p.name + std::string(width + 2 - p.name.size(), ' ') + (p.onByDefault ? "on " : "off") +
                           "  " + p.summary;
        if (!p.requires.empty()) {
            line += " (needs";
            for (const std::string& r : p.requires)
                line += " " + r;
            line += ")";
        }
        out += line + "\n";
    }
    return out;
}

std::string passesRunText(const std::vector<std::string>& ran)
{
    if (ran.empty())
        return "no passes";
    if (ran == parsePassList("default"))
        return "the default passes";
    std::string names;
    for (const std::string& name : ran)
        names += (names.empty() ? "" : ", ") + name;
    return "passes " + names;
}

}  // namespace ramiel::passes
