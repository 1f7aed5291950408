// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
struct Weights {};
struct WeightEntry {
    at::Tensor Weights::*member;
    at::ScalarType dtype;
    Ints shape;
    size_t offset;
    bool channelsLast;
    const char* name;
};
constexpr size_t kWeightsBytes = 0;
const std::vector<WeightEntry> kWeights;
constexpr const char* RAMIEL_WEIGHTS_MAGIC = "";  // placeholder: the 16-byte magic, as a string literal
// </check-only>
Weights loadWeights(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open the weights file");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() != kWeightsBytes || data.compare(0, 16, RAMIEL_WEIGHTS_MAGIC) != 0)
        throw std::runtime_error(path + ": not the weights file of this model (expected " +
                                 std::to_string(kWeightsBytes) + " bytes)");
    Weights w;
    for (const WeightEntry& e : kWeights) {
        at::Tensor t = at::empty(e.shape, at::TensorOptions().dtype(e.dtype));
        std::memcpy(t.data_ptr(), data.data() + e.offset, t.nbytes());
        w.*e.member = e.channelsLast ? t.contiguous(at::MemoryFormat::ChannelsLast) : t;
    }
    return w;
}
