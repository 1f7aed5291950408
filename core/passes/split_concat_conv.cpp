// A Concat along channels that only a convolution reads is never made: the
// convolution runs on each part with its weights' channels for that part, and
// the partial outputs are summed,
//   Conv(Concat(A, B), [W_A | W_B], b) = Conv(A, W_A, b) + Conv(B, W_B),
// written as Conv nodes and Adds, which fuse-conv-activation then turns into
// convolutions that accumulate into the partial sum (FusedConv's summand).
// SqueezeNet's fire modules and YOLO-style CSP blocks end so. Where a MaxPool or
// AveragePool between them is the Concat's only reader, it moves before the
// Concat (pooling is per channel), one pool per part.
// Fires only on float 4-D values of known channels, a Conv of one group with
// constant weights, and Concats and pools whose output nothing else reads.
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

#include <cstring>

namespace ramiel::passes {

namespace {

// The channel count of each of the Concat's inputs, when it joins 4-D float values
// along dimension 1 and every channel count is known; empty otherwise.
std::vector<int64_t> channelParts(const Graph& g, const Node& concat)
{
    if (concat.opType != "Concat" || !concat.domain.empty() || concat.inputs.size() < 2 ||
        concat.outputs.size() != 1)
        return {};
    const int64_t axis = concat.attrInt("axis", 0);
    if (axis != 1 && axis != -3)
        return {};
    std::vector<int64_t> channels;
    for (ValueId v : concat.inputs) {
        if (v == kNone)
            return {};
        const TensorType& t = g.value(v).type;
        if (t.dtype != DataType::Float || !t.shape || t.shape->dims.size() != 4 || !t.shape->dims[1].isKnown())
            return {};
        channels.push_back(t.shape->dims[1].value);
    }
    return channels;
}

// Value `like`'s type with `channels` channels.
TensorType withChannels(const TensorType& like, int64_t channels)
{
    TensorType t = like;
    if (t.shape && t.shape->dims.size() == 4)
        t.shape->dims[1] = Dim::known(channels);
    return t;
}

class SplitConcatConvPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int pools = 0, convs = 0;
        const size_t count = g.nodeCount();
        for (NodeId id = 0; id < NodeId(count); ++id) {
            const std::vector<int64_t> parts = edit.removed(id) ? std::vector<int64_t>{} : channelParts(g, g.node(id));
            if (parts.empty())
                continue;
            NodeId concat = id;
            int64_t channels = 0;
            for (int64_t c : parts)
                channels += c;
            // Concat -> Conv, or Concat -> pool -> Conv: the pool moves first.
            const ValueId joined = g.node(concat).outputs[0];
            NodeId reader = edit.soleConsumer(joined);
            if (reader != kNone && isPool(g, g.node(reader)) && g.node(reader).input(0) == joined) {
                const NodeId conv = edit.soleConsumer(g.node(reader).outputs[0]);
                if (conv == kNone || !splitsOver(g, g.node(conv), g.node(reader).outputs[0], channels))
                    continue;
                concat = poolBeforeConcat(edit, concat, reader, parts);
                ++pools;
                reader = conv;
            }
            if (reader == kNone || !splitsOver(g, g.node(reader), g.node(concat).outputs[0], channels))
                continue;
            convOverParts(edit, concat, reader, parts);
            ++convs;
        }
        edit.commit();
        stats.fused = convs;
        stats.detail = "fed " + std::to_string(convs) + " Concats to their convolutions part by part; moved " +
                       std::to_string(pools) + " pools before their Concats";
        return stats;
    }

private:
    // A MaxPool or AveragePool of one output whose shape is known to be 4-D (its parts' shapes
    // follow from it).
    static bool isPool(const Graph& g, const Node& n)
    {
        if ((n.opType != "MaxPool" && n.opType != "AveragePool") || !n.domain.empty() || n.outputs.size() != 1 ||
            n.outputs[0] == kNone || n.inputs.size() != 1)
            return false;
        const TensorType& t = g.value(n.outputs[0]).type;
        return t.shape && t.shape->dims.size() == 4;
    }

    // A Conv of one group reading x (of `channels` channels) as its input, with constant
    // float weights [M, channels, kh, kw].
    static bool splitsOver(const Graph& g, const Node& conv, ValueId x, int64_t channels)
    {
        if (conv.opType != "Conv" || !conv.domain.empty() || conv.input(0) != x || conv.outputs.size() != 1 ||
            conv.outputs[0] == kNone || conv.attrInt("group", 1) != 1)
            return false;
        const ValueId w = conv.input(1);
        if (w == kNone || w == x || conv.input(2) == x || !g.value(w).isConstant())
            return false;
        const Tensor& t = *g.value(w).initializer;
        return t.dtype == DataType::Float && t.hasData() && t.dims.size() == 4 && t.dims[1] == channels;
    }

    // Pool(Concat(parts)) -> Concat(Pool(part) for each part), the parts of `channels`
    // channels; returns the new Concat.
    static NodeId poolBeforeConcat(GraphEditor& edit, NodeId concatId, NodeId poolId,
                                   const std::vector<int64_t>& channels)
    {
        Graph& g = edit.graph();
        const Node concat = g.node(concatId), pool = g.node(poolId);
        const TensorType pooledType = g.value(pool.outputs[0]).type;
        edit.removeNode(poolId);
        edit.removeNode(concatId);
        edit.dropIfUnused(concat.outputs[0]);
        Node joined = concat;
        joined.id = kNone;
        joined.inputs.clear();
        for (size_t k = 0; k < concat.inputs.size(); ++k) {
            Node part = pool;
            part.id = kNone;
            part.name = pool.name + "_part" + std::to_string(k);
            part.inputs = {concat.inputs[k]};
            part.outputs = {edit.addValue(g.value(pool.outputs[0]).name + "_part" + std::to_string(k),
                                          withChannels(pooledType, channels[k]))};
            joined.inputs.push_back(part.outputs[0]);
            edit.addNode(std::move(part));
        }
        joined.outputs = {pool.outputs[0]};
        return edit.addNode(std::move(joined));
    }

    // Conv(Concat(parts), W, b) -> Conv(part 0, W_0, b) + Conv(part 1, W_1) + ..., the parts
    // of `channels` channels (a pool moved before the Concat keeps them).
    static void convOverParts(GraphEditor& edit, NodeId concatId, NodeId convId, const std::vector<int64_t>& channels)
    {
        Graph& g = edit.graph();
        const Node concat = g.node(concatId), conv = g.node(convId);
        const std::shared_ptr<const Tensor> w = g.value(conv.input(1)).initializer;
        const std::string weightName = g.value(conv.input(1)).name;
        const int64_t m = w->dims[0], c = w->dims[1], window = w->dims[2] * w->dims[3];
        const ValueId y = conv.outputs[0];
        const TensorType outType = g.value(y).type;
        const std::string outName = g.value(y).name;
        edit.removeNode(convId);
        edit.removeNode(concatId);
        edit.dropIfUnused(concat.outputs[0]);
        edit.dropIfUnused(conv.input(1));
        const float* weights = reinterpret_cast<const float*>(w->data.data());
        ValueId sum = kNone;
        int64_t first = 0;
        for (size_t k = 0; k < channels.size(); ++k) {
            const std::string suffix = "_part" + std::to_string(k);
            const int64_t ck = channels[k];
            std::vector<float> part(size_t(m * ck * window));
            for (int64_t o = 0; o < m; ++o)
                std::memcpy(part.data() + o * ck * window, weights + (o * c + first) * window,
                            size_t(ck * window) * sizeof(float));
            first += ck;
            Node partial = conv;
            partial.id = kNone;
            partial.name = conv.name + suffix;
            partial.inputs = {concat.inputs[k],
                              edit.addConstant(weightName + suffix,
                                               tensorFrom(DataType::Float, part, {m, ck, w->dims[2], w->dims[3]}))};
            if (k == 0 && conv.input(2) != kNone)
                partial.inputs.push_back(conv.input(2));
            const ValueId out = edit.addValue(outName + suffix, outType);
            partial.outputs = {out};
            edit.addNode(std::move(partial));
            if (k == 0) {
                sum = out;
                continue;
            }
            Node add;
            add.name = conv.name + "_sum" + std::to_string(k);
            add.opType = "Add";
            add.opset = conv.opset;
            add.inputs = {out, sum};
            add.outputs = {k + 1 == channels.size() ? y : edit.addValue(outName + "_sum" + std::to_string(k), outType)};
            sum = add.outputs[0];
            edit.addNode(std::move(add));
        }
    }
};

}  // namespace

std::unique_ptr<Pass> makeSplitConcatConvPass() { return std::make_unique<SplitConcatConvPass>(); }

}  // namespace ramiel::passes
