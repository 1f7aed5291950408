#include "core/ir/output_sizes.h"

#include <map>
#include <set>

namespace ramiel {

const std::vector<size_t>* sizeDecidingInputs(const Node& n)
{
    static const std::map<std::string, std::vector<size_t>> table = {
        {"Reshape", {1}}, {"Expand", {1}}, {"Tile", {1}}, {"Slice", {1, 2, 3, 4}}, {"Pad", {1, 3}},
        {"Squeeze", {1}}, {"Unsqueeze", {1}}, {"Split", {1}}, {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
        {"Resize", {1, 2, 3}}, {"Upsample", {1}}, {"TopK", {1}}, {"OneHot", {1}}, {"MaxUnpool", {2}},
        {"ReduceMean", {1}}, {"ReduceSum", {1}}, {"ReduceMax", {1}}, {"ReduceMin", {1}}, {"ReduceProd", {1}},
        {"ReduceL1", {1}}, {"ReduceL2", {1}}, {"ReduceSumSquare", {1}}, {"ReduceLogSum", {1}},
        {"ReduceLogSumExp", {1}}};
    if (!n.domain.empty() && n.domain != "ai.onnx")
        return nullptr;
    const auto it = table.find(n.opType);
    return it == table.end() ? nullptr : &it->second;
}

bool sizesFollowTheData(const Node& n)
{
    static const std::set<std::string> ops = {"NonZero", "NonMaxSuppression", "Unique", "Compress",
                                              "If",      "Loop",              "Scan"};
    return (n.domain.empty() || n.domain == "ai.onnx") && ops.count(n.opType) > 0;
}

}  // namespace ramiel
