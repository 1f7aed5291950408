#include "written_out.h"

namespace ramiel::test {

float groupNormScale(int64_t group) { return 1.0f + 0.125f * float(group % 3); }
float groupNormBias(int64_t group) { return 0.0625f * float(group % 5) - 0.125f; }
float channelScale(int64_t channel) { return 0.5f + 0.0625f * float(channel % 17); }
float channelBias(int64_t channel) { return 0.03125f * float(channel % 11) - 0.25f; }

void writtenOutGroupNorm(OnnxBuilder& b, const std::string& x, const std::string& p, int64_t channels, int64_t groups,
                         size_t rank, const std::string& y, const std::vector<int64_t>& restore)
{
    std::vector<int64_t> perChannel(rank - 1, 1);
    perChannel[0] = channels;
    b.initializerInt64(p + "_grouped", {0, groups, -1});
    b.initializer(p + "_s", {groups}, groupNormScale).initializer(p + "_b", {groups}, groupNormBias);
    b.initializer(p + "_w", perChannel, channelScale).initializer(p + "_beta", perChannel, channelBias);
    b.node("Reshape", {x, p + "_grouped"}, {p + "_rows"});
    OnnxBuilder::setFloat(b.node("InstanceNormalization", {p + "_rows", p + "_s", p + "_b"}, {p + "_normalized"}),
                          "epsilon", 1e-5f);
    if (restore.empty()) {
        b.node("Shape", {x}, {p + "_shape"});
    } else {
        b.initializerInt64(p + "_shape", restore);
    }
    b.node("Reshape", {p + "_normalized", p + "_shape"}, {p + "_restored"});
    b.node("Mul", {p + "_restored", p + "_w"}, {p + "_scaled"});
    b.node("Add", {p + "_beta", p + "_scaled"}, {y});
}

}  // namespace ramiel::test
