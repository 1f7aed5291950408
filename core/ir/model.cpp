#include "core/ir/model.h"

namespace ramiel {

int64_t Model::opsetVersion(const std::string& domain) const
{
    const bool defaultDomain = domain.empty() || domain == "ai.onnx";
    for (const OpsetImport& o : opsets)
        if (o.domain == domain || (defaultDomain && (o.domain.empty() || o.domain == "ai.onnx")))
            return o.version;
    return 0;
}

const OneSampleInput* Model::oneSampleInput(const std::string& name) const
{
    for (const OneSampleInput& s : oneSampleInputs)
        if (s.name == name)
            return &s;
    return nullptr;
}

}  // namespace ramiel
