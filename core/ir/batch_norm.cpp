#include "core/ir/batch_norm.h"

namespace ramiel {

bool batchNormTrains(const Node& n)
{
    if (n.opset >= 14)
        return n.attrInt("training_mode", 0) != 0;
    const bool statistics = n.outputs.size() > 1;
    return n.opset >= 7 ? statistics : statistics && n.attrInt("is_test", 0) == 0;
}

}  // namespace ramiel
