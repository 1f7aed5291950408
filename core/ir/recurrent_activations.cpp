#include "core/ir/recurrent_activations.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace ramiel {

namespace {

struct Spec {
    const char* name;
    bool usesAlpha, usesBeta;
    float alpha, beta;  // ONNX's defaults (those of the operators of the same name)
};

constexpr Spec kSpecs[] = {
    {"relu", false, false, 0, 0},          {"tanh", false, false, 0, 0},        {"sigmoid", false, false, 0, 0},
    {"affine", true, true, 1, 0},          {"leakyrelu", true, false, 0.01f, 0}, {"thresholdedrelu", true, false, 1, 0},
    {"scaledtanh", true, true, 1, 1},      {"hardsigmoid", true, true, 0.2f, 0.5f}, {"elu", true, false, 1, 0},
    {"softsign", false, false, 0, 0},      {"softplus", false, false, 0, 0},
};

std::vector<std::string> defaultNames(const std::string& opType)
{
    if (opType == "LSTM")
        return {"sigmoid", "tanh", "tanh"};
    if (opType == "GRU")
        return {"sigmoid", "tanh"};
    return {"tanh"};
}

}  // namespace

std::optional<std::vector<RecurrentActivation>> recurrentActivations(const Node& n, size_t directions, std::string& why)
{
    const std::vector<std::string> defaults = defaultNames(n.opType);
    const Attribute* given = n.attr("activations");
    std::vector<std::string> names = given ? given->strings : std::vector<std::string>{};
    if (names.empty())
        for (size_t d = 0; d < directions; ++d)
            names.insert(names.end(), defaults.begin(), defaults.end());
    // One direction's functions, alphas and betas serve both.
    if (names.size() == defaults.size() && directions == 2) {
        std::optional<std::vector<RecurrentActivation>> both = recurrentActivations(n, 1, why);
        if (both) {
            const std::vector<RecurrentActivation> forward = *both;
            both->insert(both->end(), forward.begin(), forward.end());
        }
        return both;
    }
    if (names.size() != defaults.size() * directions) {
        why = "activations lists " + std::to_string(names.size()) + " functions where " +
              std::to_string(defaults.size() * directions) + " are expected";
        return std::nullopt;
    }
    const Attribute* alphaAttr = n.attr("activation_alpha");
    const Attribute* betaAttr = n.attr("activation_beta");
    const std::vector<float> alphas = alphaAttr ? alphaAttr->floats : std::vector<float>{};
    const std::vector<float> betas = betaAttr ? betaAttr->floats : std::vector<float>{};
    size_t nextAlpha = 0, nextBeta = 0;
    std::vector<RecurrentActivation> out;
    for (const std::string& name : names) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
        const Spec* spec = std::find_if(std::begin(kSpecs), std::end(kSpecs), [&](const Spec& s) { return lower == s.name; });
        if (spec == std::end(kSpecs)) {
            why = "activation '" + name + "' is not one of ONNX's recurrent activations";
            return std::nullopt;
        }
        RecurrentActivation a{spec->name, spec->alpha, spec->beta};
        if (spec->usesAlpha && nextAlpha < alphas.size())
            a.alpha = alphas[nextAlpha++];
        if (spec->usesBeta && nextBeta < betas.size())
            a.beta = betas[nextBeta++];
        out.push_back(a);
    }
    return out;
}

std::vector<RecurrentActivation> defaultRecurrentActivations(const std::string& opType, size_t directions)
{
    std::vector<RecurrentActivation> out;
    for (size_t d = 0; d < directions; ++d)
        for (const std::string& name : defaultNames(opType))
            out.push_back({name, 0, 0});
    return out;
}

}  // namespace ramiel
