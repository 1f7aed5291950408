// MatMul followed by Add of a constant becomes Gemm (Y = A B + C), where
// Gemm's semantics allow it: A a 2-D float matrix of known shape, B a 2-D
// constant, C a constant that broadcasts to [M, N] one way ([N], [1, N],
// [M, 1], [M, N] or a scalar), and the MatMul's output read by the Add alone.
// Where A has more dimensions (a transformer's linear layers on [batch, tokens,
// channels]) and C is a bias of N elements, it becomes ai.ramiel.MatMulAdd
// (core/ir/fused_ops.h), which the runtime runs as one oneDNN matmul that adds
// the bias in its kernel; a GELU (fuse-gelu's ai.ramiel.Gelu) that alone reads
// its output joins it, applied in the same kernel.
#include "core/ir/fused_ops.h"
#include "core/passes/graph_editor.h"
#include "core/passes/passes.h"

namespace ramiel::passes {

namespace {

bool broadcastsTo(const std::vector<int64_t>& c, int64_t m, int64_t n)
{
    if (c.size() > 2)
        return false;
    const int64_t cm = c.size() == 2 ? c[0] : 1;
    const int64_t cn = c.empty() ? 1 : c.back();
    return (cm == 1 || cm == m) && (cn == 1 || cn == n);
}

// C is a bias row for an output of rank `rank` and N columns: [1, ..., 1, N], no longer.
bool biasRow(const std::vector<int64_t>& c, size_t rank, int64_t n)
{
    if (c.empty() || c.size() > rank || c.back() != n)
        return false;
    for (size_t i = 0; i + 1 < c.size(); ++i)
        if (c[i] != 1)
            return false;
    return true;
}

// MatMulAdd -> Gelu, the MatMulAdd's output read by the Gelu alone: the Gelu becomes
// the MatMulAdd's activation. Returns how many.
int absorbGelus(Graph& g)
{
    GraphEditor edit(g);
    int gelus = 0;
    for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
        const Node& mm = g.node(id);
        if (mm.domain != kRamielDomain || mm.opType != kMatMulAdd || mm.attr("activation") || mm.outputs.size() != 1)
            continue;
        const NodeId geluId = edit.soleConsumer(mm.outputs[0]);
        if (geluId == kNone)
            continue;
        const Node& gelu = g.node(geluId);
        if (gelu.domain != kRamielDomain || gelu.opType != kGelu || gelu.input(0) != mm.outputs[0] ||
            gelu.outputs.size() != 1 || gelu.outputs[0] == kNone)
            continue;
        const ValueId sum = mm.outputs[0], y = gelu.outputs[0];
        edit.removeNode(geluId);
        edit.setOutput(id, 0, y);
        edit.dropIfUnused(sum);
        g.node(id).attributes.push_back(Attribute::ofString("activation", kGelu));
        ++gelus;
    }
    edit.commit();
    return gelus;
}

class FuseMatMulAddPass final : public Pass {
public:
    PassStats run(Model& model, const PassContext&) override
    {
        Graph& g = model.graph;
        GraphEditor edit(g);
        PassStats stats;
        int gemms = 0;
        for (NodeId id = 0; id < NodeId(g.nodeCount()); ++id) {
            const Node& mm = g.node(id);
            if (mm.opType != "MatMul" || !mm.domain.empty() || mm.outputs.size() != 1 || mm.opset < 9)
                continue;
            const ValueId a = mm.input(0), b = mm.input(1), x = mm.outputs[0];
            if (a == kNone || b == kNone || x == kNone || !g.value(b).isConstant())
                continue;
            const auto& aShape = g.value(a).type.shape;
            const Tensor& bT = *g.value(b).initializer;
            if (g.value(a).type.dtype != DataType::Float || bT.dtype != DataType::Float || !aShape ||
                aShape->rank() < 2 || bT.dims.size() != 2 || (aShape->rank() == 2 && !aShape->dims[0].isKnown()))
                continue;
            const bool gemm = aShape->rank() == 2;
            const NodeId addId = edit.soleConsumer(x);
            if (addId == kNone)
                continue;
            const Node& add = g.node(addId);
            if (add.opType != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1)
                continue;
            const ValueId c = add.input(0) == x ? add.input(1) : add.input(0);
            if (c == x || c == kNone || !g.value(c).isConstant())
                continue;
            const Tensor& cT = *g.value(c).initializer;
            if (cT.dtype != DataType::Float || !(gemm ? broadcastsTo(cT.dims, aShape->dims[0].value, bT.dims[1])
                                                      : biasRow(cT.dims, aShape->rank(), bT.dims[1])))
                continue;
            const ValueId y = add.outputs[0];
            edit.removeNode(addId);
            Node& fused = g.node(id);
            if (gemm) {
                fused.opType = "Gemm";
                ++gemms;
            } else {
                makeRamielNode(fused, kMatMulAdd);
            }
            edit.setInput(id, 2, c);
            edit.setOutput(id, 0, y);
            ++stats.fused;
            ++stats.removed;
        }
        edit.commit();
        const int gelus = absorbGelus(g);
        stats.fused += gelus;
        stats.removed += gelus;
        if (stats.fused > gemms)
            importRamielDomain(model);
        const int pairs = stats.fused - gelus;
        stats.detail = "fused " + std::to_string(pairs) + " MatMul+Add pairs (" + std::to_string(gemms) + " into Gemm, " +
                       std::to_string(pairs - gemms) + " into MatMulAdd) and " + std::to_string(gelus) +
                       " GELUs into MatMulAdd";
        return stats;
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseMatMulAddPass() { return std::make_unique<FuseMatMulAddPass>(); }

}  // namespace ramiel::passes
