#include "core/runtime/torch/fused_activation.h"

#include <map>
#include <string>
#include <vector>

namespace ramiel {

FusedActivation fusedActivation(const KernelContext& c)
{
    const std::string activation = c.node.attrString("activation", "");
    const Attribute* paramsAttr = c.node.attr("activation_params");
    const std::vector<float> params = paramsAttr ? paramsAttr->floats : std::vector<float>{};
    static const std::map<std::string, FusedActivation::Kind> plain{{"", FusedActivation::None},
                                                                    {"Relu", FusedActivation::Relu},
                                                                    {"Sigmoid", FusedActivation::Sigmoid},
                                                                    {"HardSwish", FusedActivation::HardSwish},
                                                                    {"Silu", FusedActivation::Silu}};
    const auto it = plain.find(activation);
    if (it != plain.end() && params.empty())
        return {it->second};
    if (activation == "LeakyRelu" && params.size() == 1)
        return {FusedActivation::LeakyRelu, params[0]};
    if (activation == "Clip" && params.size() == 2)
        return {FusedActivation::Clip, params[0], params[1]};
    c.unsupported("activation '" + activation + "' with " + std::to_string(params.size()) + " parameters");
}

}  // namespace ramiel
