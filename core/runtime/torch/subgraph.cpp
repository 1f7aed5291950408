#include "core/runtime/torch/subgraph.h"

#include "core/util/error.h"

namespace ramiel {

namespace {

Model bodyModel(const Graph& body)
{
    Model m;
    m.graph = body;
    return m;
}

}  // namespace

CompiledSubgraph::CompiledSubgraph(const Graph& parent, const Node& node, const Graph& body, const std::string& attribute)
{
    const std::string where = "the " + attribute + " of node '" + node.name + "' (" + node.opType + ")";
    try {
        model_ = std::make_shared<TorchCompiledModel>(bodyModel(body));
    } catch (const Error& e) {
        throw Error(e.kind(), {}, "in " + where + ": " + e.message());
    }
    const Graph& g = model_->graph();
    for (const Value& v : g.values()) {
        if (!v.isOuterScope)
            continue;
        size_t k = 0;
        while (k < node.implicitInputs.size() && parent.value(node.implicitInputs[k]).name != v.name)
            ++k;
        if (k == node.implicitInputs.size())
            throw Error(ErrorKind::InvalidGraph, {}, where + " reads '" + v.name + "', which the enclosing graph does not define");
        outer_.emplace_back(v.id, node.inputs.size() + k);
    }
    uses_.assign(g.valueCount(), 0);
    for (const Node& n : g.nodes()) {
        for (ValueId v : distinctReads(n))
            ++uses_[size_t(v)];
    }
    for (ValueId v : g.outputs())
        ++uses_[size_t(v)];
}

DataType CompiledSubgraph::outputType(size_t i) const
{
    return model_->graph().value(model_->graph().outputs()[i]).type.dtype;
}

std::vector<at::Tensor> CompiledSubgraph::run(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& nodeInputs) const
{
    const Graph& g = model_->graph();
    std::vector<at::Tensor> values(g.valueCount());
    for (const Value& v : g.values())
        if (v.isConstant())
            values[size_t(v.id)] = model_->constant(v.id);
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i)
        values[size_t(g.inputs()[i])] = inputs[i];
    for (const auto& [v, k] : outer_)
        values[size_t(v)] = nodeInputs.at(k);
    std::vector<int> left = uses_;
    std::vector<at::Tensor> in, out;
    for (NodeId id : model_->topology().order) {
        const Node& n = g.node(id);
        in.clear();
        for (ValueId v : n.inputs)
            in.push_back(v == kNone ? at::Tensor() : values[size_t(v)]);
        for (ValueId v : n.implicitInputs)
            in.push_back(values[size_t(v)]);
        out.assign(n.outputs.size(), at::Tensor());
        model_->runNode(id, in, out);
        for (size_t k = 0; k < n.outputs.size(); ++k)
            if (n.outputs[k] != kNone)
                values[size_t(n.outputs[k])] = out[k];
        for (ValueId v : distinctReads(n))
            if (--left[size_t(v)] == 0)
                values[size_t(v)] = at::Tensor();
    }
    std::vector<at::Tensor> outputs;
    for (ValueId v : g.outputs())
        outputs.push_back(values[size_t(v)]);
    return outputs;
}

}  // namespace ramiel
