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

}  // namespace ramiel
