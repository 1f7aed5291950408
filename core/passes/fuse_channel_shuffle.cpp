// ShuffleNet's channel shuffle, as exporters write torchvision's
// channel_shuffle: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose
// [0, 2, 1, 3, 4], Reshape back to [N, C, H, W] (also with the pixels as one
// dimension, [N, g, C/g, H·W] and [0, 2, 1, 3], the form Ramiel's exporter
// writes the fused node back as); with the Concat along
// channels that feeds it (where the Concat's output is read by the shuffle
// alone) and the Slices along channels (or the Split) that cut its result
// (where they are its only readers and cover it exactly), becomes one
// ai.ramiel.ChannelShuffle node (core/ir/fused_ops.h). The runtime then makes
// each output in one pass over memory, pixel by pixel on the channels-last
// activations, where the written-out form copied three times (Concat,
// Transpose, Slices) and changed layout twice. Needs the input's shape known.
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <algorithm>
#include <limits>

namespace ramiel::passes {

namespace {

// The integer values of constant `v`, when it is one.
std::optional<std::vector<int64_t>> constInts(const Graph& g, ValueId v)
{
    if (v == kNone || !g.value(v).isConstant() || !g.value(v).initializer->hasData())
        return std::nullopt;
    const DataType t = g.value(v).initializer->dtype;
    if (t != DataType::Int64 && t != DataType::Int32)
        return std::nullopt;
    return g.value(v).initializer->toInt64s();
}

// acc *= d, false where the product leaves int64 (absurd sizes from a hostile file).
bool multiplyInto(int64_t& acc, int64_t d) { return !__builtin_mul_overflow(acc, d, &acc); }

// The sizes a Reshape (opset >= 5, shape a constant) of a tensor of `in` gives, or nothing.
std::optional<std::vector<int64_t>> reshaped(const Graph& g, const Node& reshape, const std::vector<int64_t>& in)
{
    if (reshape.opType != "Reshape" || !reshape.domain.empty() || reshape.opset < 5 || reshape.outputs.size() != 1 ||
        reshape.outputs[0] == kNone)
        return std::nullopt;
    const auto shape = constInts(g, reshape.input(1));
    if (!shape)
        return std::nullopt;
    const bool allowZero = reshape.attrInt("allowzero", 0) != 0;
    int64_t total = 1, known = 1, inferred = -1;
    for (int64_t d : in)
        if (d < 0 || !multiplyInto(total, d))
            return std::nullopt;
    std::vector<int64_t> out = *shape;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !allowZero) {
            if (i >= in.size())
                return std::nullopt;
            out[i] = in[i];
        }
        if (out[i] == -1) {
            if (inferred >= 0)
                return std::nullopt;
            inferred = int64_t(i);
        } else if (out[i] < 0) {
            return std::nullopt;
        } else if (!multiplyInto(known, out[i])) {
            return std::nullopt;
        }
    }
    if (inferred >= 0) {
        if (known == 0 || total % known)
            return std::nullopt;
        out[size_t(inferred)] = total / known;
    } else if (known != total) {
        return std::nullopt;
    }
    return out;
}

// [0, 2, 1, 3, ...]: dimensions 1 and 2 swapped, at least one after them kept.
bool swapsGroups(const std::vector<int64_t>& perm)
{
    if (perm.size() < 4 || perm[0] != 0 || perm[1] != 2 || perm[2] != 1)
        return false;
    for (size_t i = 3; i < perm.size(); ++i)
        if (perm[i] != int64_t(i))
            return false;
    return true;
}

// One of the shuffle's readers that cuts its channels [begin, end) out into `out`.
struct Cut {
    int64_t begin, end;
    ValueId out;
};

// Slice (opset >= 10) of `channels` along dimension 1 (or -3) of a rank-4 tensor, step 1.
std::optional<Cut> sliceCut(const Graph& g, const Node& s, int64_t channels)
{
    if (s.opType != "Slice" || !s.domain.empty() || s.opset < 10 || s.outputs.size() != 1 || s.outputs[0] == kNone)
        return std::nullopt;
    const auto starts = constInts(g, s.input(1)), ends = constInts(g, s.input(2)), axes = constInts(g, s.input(3));
    if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
        ((*axes)[0] != 1 && (*axes)[0] != -3))
        return std::nullopt;
    if (s.input(4) != kNone) {
        const auto steps = constInts(g, s.input(4));
        if (!steps || steps->size() != 1 || (*steps)[0] != 1)
            return std::nullopt;
    }
    auto clamp = [channels](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + channels : i, 0, channels); };
    return Cut{clamp((*starts)[0]), clamp((*ends)[0]), s.outputs[0]};
}

// Split of `channels` along dimension 1 (or -3) into parts of known sizes, each output present.
std::optional<std::vector<Cut>> splitCuts(const Graph& g, const Node& s, int64_t channels)
{
    if (s.opType != "Split" || !s.domain.empty() || s.outputs.empty() || s.opset >= 18 || s.opset < 2)
        return std::nullopt;
    const int64_t axis = s.attrInt("axis", 0);
    if (axis != 1 && axis != -3)
        return std::nullopt;
    std::vector<int64_t> sizes;
    if (s.opset < 13) {
        sizes = s.attrInts("split");
    } else if (s.input(1) != kNone) {
        const auto given = constInts(g, s.input(1));
        if (!given)
            return std::nullopt;
        sizes = *given;
    }
    const int64_t n = int64_t(s.outputs.size());
    if (sizes.empty()) {
        if (channels % n)
            return std::nullopt;
        sizes.assign(size_t(n), channels / n);
    }
    if (int64_t(sizes.size()) != n)
        return std::nullopt;
    std::vector<Cut> cuts;
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (s.outputs[size_t(i)] == kNone || sizes[size_t(i)] < 0)
            return std::nullopt;
        cuts.push_back({at, at + sizes[size_t(i)], s.outputs[size_t(i)]});
        at += sizes[size_t(i)];
    }
    if (at != channels)
        return std::nullopt;
    return cuts;
}

// The cuts the readers of `y` make, when every reader is such a Slice or Split and
// together they cover [0, channels) once, each output non-empty; else nothing.
std::optional<std::vector<Cut>> cutsOf(const GraphEditor& edit, ValueId y, int64_t channels)
{
    const Graph& g = edit.graph();
    const Value& v = g.value(y);
    if (v.isGraphOutput || v.consumers.empty() || edit.readBySubgraph(y))
        return std::nullopt;
    std::vector<Cut> cuts;
    for (NodeId c : v.consumers) {
        const Node& n = g.node(c);
        if (n.input(0) != y || std::count(n.inputs.begin(), n.inputs.end(), y) != 1)
            return std::nullopt;
        if (auto cut = sliceCut(g, n, channels)) {
            cuts.push_back(*cut);
        } else if (auto parts = splitCuts(g, n, channels)) {
            cuts.insert(cuts.end(), parts->begin(), parts->end());
        } else {
            return std::nullopt;
        }
    }
    std::sort(cuts.begin(), cuts.end(), [](const Cut& a, const Cut& b) { return a.begin < b.begin; });
    int64_t at = 0;
    for (const Cut& c : cuts) {
        if (c.begin != at || c.end <= c.begin)
            return std::nullopt;
        at = c.end;
    }
    if (at != channels)
        return std::nullopt;
    return cuts;
}

class FuseChannelShufflePass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int withConcat = 0, withCuts = 0;
        for (NodeId tId = 0; tId < NodeId(g.nodeCount()); ++tId) {
            const Node& t = g.node(tId);
            if (edit.removed(tId) || t.opType != "Transpose" || !t.domain.empty() || t.outputs.size() != 1 ||
                t.outputs[0] == kNone || !swapsGroups(t.attrInts("perm")))
                continue;
            // x [N, C, H, W] -> Reshape [N, g, C/g, H, W], read by the Transpose alone.
            const ValueId r1Out = t.input(0), tOut = t.outputs[0];
            const NodeId r1Id = r1Out == kNone ? kNone : g.value(r1Out).producer;
            if (r1Id == kNone || edit.soleConsumer(r1Out) != tId)
                continue;
            const Node& r1 = g.node(r1Id);
            const ValueId x = r1.input(0);
            const auto& xShape = x == kNone ? std::nullopt : g.value(x).type.shape;
            const auto xSizes = xShape ? xShape->sizes() : std::nullopt;
            if (!xSizes || xSizes->size() != 4)
                continue;
            const int64_t n = (*xSizes)[0], c = (*xSizes)[1], h = (*xSizes)[2], w = (*xSizes)[3];
            if (c < 1)
                continue;
            // [N, g, C/g, then the pixels in any shape: H, W or H·W].
            const auto grouped = reshaped(g, r1, *xSizes);
            if (!grouped || grouped->size() != t.attrInts("perm").size() || (*grouped)[0] != n ||
                (*grouped)[1] < 1 || (*grouped)[1] * (*grouped)[2] != c)
                continue;
            int64_t pixels = 1, hw = h;
            bool fits = multiplyInto(hw, w);
            for (size_t i = 3; i < grouped->size(); ++i)
                fits = fits && multiplyInto(pixels, (*grouped)[i]);
            if (!fits || pixels != hw)
                continue;
            const int64_t group = (*grouped)[1];
            // -> Transpose -> Reshape [N, C, H, W], the Transpose's output read by the Reshape alone.
            const NodeId r2Id = edit.soleConsumer(tOut);
            if (r2Id == kNone || g.node(r2Id).input(0) != tOut)
                continue;
            std::vector<int64_t> swapped = *grouped;
            std::swap(swapped[1], swapped[2]);
            const auto back = reshaped(g, g.node(r2Id), swapped);
            if (!back || *back != *xSizes)
                continue;
            // The Concat along channels that makes x, when x is read by the shuffle alone.
            std::vector<ValueId> inputs{x};
            const NodeId concatId = g.value(x).producer;
            if (concatId != kNone && edit.soleConsumer(x) == r1Id) {
                const Node& cat = g.node(concatId);
                const int64_t axis = cat.attrInt("axis", 0);
                if (cat.opType == "Concat" && cat.domain.empty() && cat.outputs.size() == 1 && (axis == 1 || axis == -3) &&
                    !cat.inputs.empty() && std::count(cat.inputs.begin(), cat.inputs.end(), kNone) == 0)
                    inputs = cat.inputs;
            }
            const ValueId y = g.node(r2Id).outputs[0];
            const auto cuts = cutsOf(edit, y, c);

            // The second Reshape becomes the shuffle, in its place.
            std::vector<ValueId> outputs{y};
            std::vector<int64_t> split{c};
            if (cuts) {
                outputs.clear();
                split.clear();
                for (const Cut& cut : *cuts) {
                    outputs.push_back(cut.out);
                    split.push_back(cut.end - cut.begin);
                }
                std::vector<NodeId> readers = g.value(y).consumers;
                for (NodeId r : readers)
                    edit.removeNode(r);
                stats.removed += int(readers.size());
                ++withCuts;
            }
            if (inputs.size() != 1 || inputs[0] != x) {
                edit.removeNode(concatId);
                edit.dropIfUnused(x);
                ++stats.removed;
                ++withConcat;
            }
            edit.removeNode(tId);
            edit.removeNode(r1Id);
            edit.dropIfUnused(r1Out);
            edit.dropIfUnused(tOut);
            stats.removed += 2;
            const size_t oldInputs = g.node(r2Id).inputs.size();
            for (size_t i = 0; i < std::max(oldInputs, inputs.size()); ++i)
                edit.setInput(r2Id, i, i < inputs.size() ? inputs[i] : kNone);
            if (cuts) {  // else it keeps its output
                for (size_t i = 0; i < outputs.size(); ++i)
                    edit.setOutput(r2Id, i, outputs[i]);
                edit.dropIfUnused(y);
            }
            Node& fused = g.node(r2Id);
            fused.inputs.resize(inputs.size());
            makeRamielNode(fused, kChannelShuffle);
            fused.attributes = {Attribute::ofInt("group", group), Attribute::ofInts("split", split)};
            ++stats.fused;
        }
        edit.commit();
        if (stats.fused)
            importRamielDomain(model);
        stats.detail = "fused " + std::to_string(stats.fused) + " channel shuffles (Reshape, Transpose, Reshape), " +
                       std::to_string(withConcat) + " with their Concat, " + std::to_string(withCuts) +
                       " with their Slices or Split";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseChannelShufflePass() { return std::make_unique<FuseChannelShufflePass>(); }

}  // namespace ramiel::passes
