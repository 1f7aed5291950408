#include "core/ir/declared_types.h"

namespace ramiel {

namespace {

// Whether `t` is of type `declared`, judged on what the declaration knows.
bool fits(const Tensor& t, const TensorType& declared)
{
    if (declared.dtype != DataType::Undefined && declared.dtype != t.dtype)
        return false;
    if (!declared.shape)
        return true;
    if (declared.shape->rank() != t.dims.size())
        return false;
    for (size_t d = 0; d < t.dims.size(); ++d)
        if (declared.shape->dims[d].isKnown() && declared.shape->dims[d].value != t.dims[d])
            return false;
    return true;
}

}  // namespace

std::vector<std::string> outputsContradictingDeclarations(const Graph& g, const std::vector<Tensor>& inputs,
                                                          const std::vector<Tensor>& outputs)
{
    size_t k = 0;
    for (ValueId v : g.inputs()) {
        if (g.value(v).isConstant())
            continue;
        if (k >= inputs.size() || !fits(inputs[k++], g.value(v).type))
            return {};
    }
    std::vector<std::string> lines;
    for (size_t i = 0; i < outputs.size() && i < g.outputs().size(); ++i) {
        const Value& declared = g.value(g.outputs()[i]);
        if (!fits(outputs[i], declared.type))
            lines.push_back("output '" + declared.name + "' is declared " + declared.type.toString() + "; the run gave " +
                            outputs[i].type().toString());
    }
    return lines;
}

}  // namespace ramiel
