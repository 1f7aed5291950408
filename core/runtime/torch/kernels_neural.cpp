// Neural-network operators but convolutions (kernels_convolution.cpp): GEMM and MatMul,
// pooling, normalizations, softmax.
#include "core/runtime/torch/kernel.h"

#include "core/runtime/torch/fused_activation.h"
#include "core/runtime/torch/onednn_support.h"

#include "core/runtime/torch/activation_loops.h"
#include "core/runtime/torch/channels_last.h"
#include "core/runtime/torch/matrix_vector.h"
#include "core/runtime/torch/parallel_chunks.h"
#include "core/runtime/torch/pooling_3d.h"
#include "core/runtime/torch/sgemm.h"
#include "core/runtime/torch/vector_math.h"

#include "core/ir/batch_norm.h"
#include "core/ir/fused_ops.h"
#include "core/ir/lp_pool_order.h"
#include "core/ir/window.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"

#include <ATen/Parallel.h>

#if RAMIEL_HAVE_DNNL
#include <dnnl.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

namespace ramiel {

namespace {

// ONNX's (and PyTorch's) ceil_mode rule: the last window must start inside the input or left padding.
at::Tensor pool(const at::Tensor& x, const Window& w, bool max, bool countIncludePad)
{
    // uint8 max-pooling (the quantize pass keeps pooled values in int8): libtorch's quantized
    // max_pool2d, which skips padded cells like ONNX's -infinity padding.
    if (max && x.scalar_type() == at::kByte && x.dim() == 4 && w.kernel.size() == 2 && w.symmetric() &&
        w.padBegin[0] * 2 <= w.kernel[0] && w.padBegin[1] * 2 <= w.kernel[1]) {
        const at::Tensor q = at::_make_per_tensor_quantized_tensor(x, 1.0, 0);
        return at::max_pool2d(q, w.kernel, w.strides, w.padBegin, w.dilations, w.ceil).int_repr();
    }
    if (!at::isFloatingType(x.scalar_type()))
        return pool(x.to(at::kDouble), w, max, countIncludePad).to(x.scalar_type());
    const size_t d = w.kernel.size();
    at::Tensor input = x;
    std::vector<int64_t> pad(d, 0);
    bool padded = !w.symmetric();
    for (size_t i = 0; i < d && !padded; ++i)
        padded = w.padBegin[i] * 2 > w.kernel[i];  // ATen allows at most half the kernel
    if (padded)
        input = at::constant_pad_nd(x, w.atenPads(), max ? -std::numeric_limits<double>::infinity() : 0.0);
    else
        pad = w.padBegin;
    auto run = [&](const at::Tensor& t, bool include) -> at::Tensor {
        if (max) {
            if (d == 1) return at::max_pool1d(t, w.kernel, w.strides, pad, w.dilations, w.ceil);
            if (d == 2) return at::max_pool2d(t, w.kernel, w.strides, pad, w.dilations, w.ceil);
            return at::max_pool3d(t, w.kernel, w.strides, pad, w.dilations, w.ceil);
        }
        if (d == 1) return at::avg_pool1d(t, w.kernel, w.strides, pad, w.ceil, include);
        if (d == 2) return at::avg_pool2d(t, w.kernel, w.strides, pad, w.ceil, include);
        return at::avg_pool3d(t, w.kernel, w.strides, pad, w.ceil, include);
    };
    if (max || !padded || countIncludePad)
        return run(input, countIncludePad);
    // Explicit padding but padded cells must not count: divide by the window's real cell count.
    const at::Tensor ones = at::constant_pad_nd(at::ones_like(x), w.atenPads(), 0.0);
    return run(input, true) / run(ones, true);
}

#if RAMIEL_HAVE_DNNL
// How oneDNN's sgemm reads a row-major [rows, cols] matrix: 'N' with its rows
// contiguous, 'T' where it is the transposed view of a contiguous one (an
// undefined tensor when neither: the caller copies it).
struct GemmOperand {
    char trans = 'N';
    int64_t ld = 0;
};
std::optional<GemmOperand> gemmOperand(const at::Tensor& m)
{
    const int64_t rows = m.size(-2), cols = m.size(-1);
    if (m.stride(-1) == 1 && (rows == 1 || m.stride(-2) == cols))
        return GemmOperand{'N', cols};
    if (m.stride(-2) == 1 && (cols == 1 || m.stride(-1) == rows))
        return GemmOperand{'T', rows};
    return std::nullopt;
}

// A float MatMul on oneDNN's sgemm (its AVX-512 JIT kernels; ATen's matmul goes
// to OpenBLAS, which runs its Haswell kernels here, OPENBLAS_CORETYPE). A 2-D B:
// A's leading dimensions fold into its rows, one product on the intra-op threads.
// A and B with the same batch dimensions (attention's products): one product per
// batch entry, the entries split over the threads (ATen's bmm ran them one after
// another, on one). Undefined where neither applies.
at::Tensor sgemmMatMul(const at::Tensor& a, const at::Tensor& b)
{
    if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || a.dim() < 2 || b.dim() < 2 ||
        a.size(-1) != b.size(-2) || a.numel() == 0 || b.numel() == 0)
        return at::Tensor();
    const bool batched = b.dim() > 2;
    if (batched && (a.dim() != b.dim() || a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2)))
        return at::Tensor();
    const at::Tensor x = a.contiguous();
    const int64_t k = b.size(-2), n = b.size(-1);
    const int64_t batch = batched ? b.numel() / (k * n) : 1;
    const int64_t m = x.numel() / k / batch;
    at::Tensor w = batched ? b.flatten(0, b.dim() - 3) : b;  // [batch, k, n] or [k, n]
    std::optional<GemmOperand> wl = gemmOperand(w);
    if (batched && wl && w.stride(0) != k * n)
        wl.reset();
    if (!wl) {
        w = b.contiguous();
        wl = GemmOperand{'N', n};
    }
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes.back() = n;
    at::Tensor y = at::empty(sizes, x.options());
    const float* xs = x.data_ptr<float>();
    const float* ws = w.data_ptr<float>();
    float* ys = y.data_ptr<float>();
    auto product = [&](int64_t i) {
        sgemm(wl->trans, m, n, k, xs + i * m * k, k, ws + i * k * n, wl->ld, 0.0f, ys + i * m * n, n);
    };
    if (!batched)
        product(0);
    else
        parallelChunks(batch, 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i)
                product(i);
        });
    return y;
}

// A float MatMul of two activations with the same batch dimensions (attention's
// products) as one oneDNN matmul primitive on the operands as they lie: a transposed
// or sliced view (K^T, V out of the qkv projection) is read in place. Made once per
// sizes, strides and intra-op thread count. sgemmMatMul, which copies such operands
// and runs a product per batch entry, ran swin_t's 24 slower on two threads than on
// one (3.7 -> 5.3 ms).
class OneDnnBatchedMatMul {
public:
    // Undefined where a and b are not such a pair or oneDNN has no kernel for their strides.
    at::Tensor operator()(const at::Tensor& a, const at::Tensor& b)
    {
        if (a.scalar_type() != at::kFloat || b.scalar_type() != at::kFloat || a.dim() < 3 || a.dim() != b.dim() ||
            a.dim() > DNNL_MAX_NDIMS || a.size(-1) != b.size(-2) || a.numel() == 0 || b.numel() == 0 ||
            a.sizes().slice(0, a.dim() - 2) != b.sizes().slice(0, b.dim() - 2) || broadcast(a) || broadcast(b))
            return at::Tensor();
        const std::shared_ptr<const Primitive> p = primitiveFor(a, b, at::get_num_threads());
        if (!p)
            return at::Tensor();
        std::vector<int64_t> sizes = a.sizes().vec();
        sizes.back() = b.size(-1);
        at::Tensor y = at::empty(sizes, a.options());
        p->arguments.execute(p->primitive, p->pd, a.data_ptr(), b.data_ptr(), y.data_ptr());
        return y;
    }

private:
    struct Primitive {
        dnnl::matmul::primitive_desc pd;
        dnnl::matmul primitive;
        ThreadArguments arguments;  // workers may run the node at once
    };

    // A dimension of more than one element read with stride 0 (an expanded view).
    static bool broadcast(const at::Tensor& t)
    {
        for (int64_t d = 0; d < t.dim(); ++d)
            if (t.size(d) > 1 && t.stride(d) <= 0)
                return true;
        return false;
    }

    std::shared_ptr<const Primitive> primitiveFor(const at::Tensor& a, const at::Tensor& b, int threads)
    {
        std::vector<int64_t> key;
        for (const at::Tensor* t : {&a, &b})
            for (at::IntArrayRef v : {t->sizes(), t->strides()})
                key.insert(key.end(), v.begin(), v.end());
        key.push_back(threads);
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [k, p] : primitives_)
            if (k == key)
                return p;
        std::shared_ptr<Primitive> p;
        try {
            const auto f32 = dnnl::memory::data_type::f32;
            std::vector<int64_t> dst = a.sizes().vec(), dense(dst.size(), 1);
            dst.back() = b.size(-1);
            for (size_t d = dst.size() - 1; d-- > 0;)
                dense[d] = dense[d + 1] * dst[d + 1];
            const dnnl::matmul::desc desc({a.sizes().vec(), f32, a.strides().vec()}, {b.sizes().vec(), f32, b.strides().vec()},
                                          {dst, f32, dense});
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            p = std::make_shared<Primitive>();
            p->pd = dnnl::matmul::primitive_desc(desc, attr, dnnlEngine());
            p->primitive = dnnl::matmul(p->pd);
        } catch (const dnnl::error&) {
            p.reset();  // no kernel for these strides: sgemmMatMul
        }
        primitives_.emplace_back(key, p);
        return p;
    }

    std::mutex mutex_;
    // By the sizes and strides of a and b and the thread count; null where oneDNN has no kernel.
    std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const Primitive>>> primitives_;
};

// A float MatMul by a constant 2-D B, plus a bias row where the node has one
// (ai.ramiel.MatMulAdd) and then its GELU, as one oneDNN matmul primitive: B
// reordered once into the layout the primitive picks, the bias and the GELU
// applied in the kernel while the output is in registers. A's leading
// dimensions fold into its rows. Made once per row count and intra-op thread
// count (as the convolutions), shared by copies of the node on workers with the
// same threads; each run passes its own scratchpad.
class OneDnnMatMul {
public:
    OneDnnMatMul(at::Tensor b, at::Tensor bias, bool gelu = false)
        : b_(b.is_contiguous() || b.t().is_contiguous() ? b : b.contiguous()),  // Gemm's transB: read as it lies
          bias_(bias.defined() ? bias.reshape({-1}).contiguous() : bias), gelu_(gelu)
    {
    }

    // For a constant B (undefined when the node's B is not constant) that is a 2-D
    // float matrix, and a bias, where defined, of float constants, one per column:
    // else null, and the caller takes the general path.
    static std::shared_ptr<OneDnnMatMul> forConstant(const at::Tensor& b, const at::Tensor& bias, bool gelu = false)
    {
        if (!b.defined() || b.dim() != 2 || b.scalar_type() != at::kFloat || b.numel() == 0)
            return nullptr;
        if (bias.defined() && (bias.scalar_type() != at::kFloat || bias.numel() != b.size(1)))
            return nullptr;
        return std::make_shared<OneDnnMatMul>(b, bias, gelu);
    }

    bool applies(const at::Tensor& a) const
    {
        return a.scalar_type() == at::kFloat && a.dim() >= 2 && a.size(-1) == b_.size(0) && a.numel() > 0;
    }

    // a: float, rank >= 2, last dimension K.
    at::Tensor operator()(const at::Tensor& a)
    {
        const at::Tensor x = a.contiguous();
        const int64_t k = b_.size(0), n = b_.size(1), m = x.numel() / k;
        const std::shared_ptr<const Primitive> p = primitiveFor(m, at::get_num_threads());
        std::vector<int64_t> sizes = x.sizes().vec();
        sizes.back() = n;
        at::Tensor y = at::empty(sizes, x.options());
        p->arguments.execute(p->primitive, p->pd, x, y, p->weights, bias_.defined() ? &p->bias : nullptr);
        return y;
    }

private:
    struct Primitive {
        int64_t m;
        int threads;
        dnnl::matmul::primitive_desc pd;
        dnnl::matmul primitive;
        at::Tensor weightBuffer;
        dnnl::memory weights, bias;
        ThreadArguments arguments;
    };

    std::shared_ptr<const Primitive> primitiveFor(int64_t m, int threads)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& p : primitives_)
            if (p->m == m && p->threads == threads)
                return p;
        using tag = dnnl::memory::format_tag;
        const auto f32 = dnnl::memory::data_type::f32;
        const int64_t k = b_.size(0), n = b_.size(1);
        const dnnl::memory::desc src({m, k}, f32, tag::ab), dst({m, n}, f32, tag::ab);
        const dnnl::memory::desc anyWeights({k, n}, f32, tag::any), bias({1, n}, f32, tag::ab);
        const dnnl::matmul::desc desc = bias_.defined() ? dnnl::matmul::desc(src, anyWeights, bias, dst)
                                                        : dnnl::matmul::desc(src, anyWeights, dst);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        if (gelu_) {
            dnnl::post_ops ops;
            ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
            attr.set_post_ops(ops);
        }
        auto p = std::make_shared<Primitive>();
        p->m = m;
        p->threads = threads;
        p->pd = dnnl::matmul::primitive_desc(desc, attr, dnnlEngine());
        p->primitive = dnnl::matmul(p->pd);
        std::tie(p->weightBuffer, p->weights) =
            reorderedWeights(p->pd.weights_desc(), dnnl::memory::desc({k, n}, f32, b_.is_contiguous() ? tag::ab : tag::ba),
                             b_);
        if (bias_.defined())
            p->bias = dnnl::memory(bias, dnnlEngine(), bias_.data_ptr());
        primitives_.push_back(p);
        return p;
    }

    at::Tensor b_, bias_;  // [K, N] (contiguous, or the transposed view of a contiguous [N, K]), [N]: floats
    bool gelu_;
    std::mutex mutex_;
    std::vector<std::shared_ptr<const Primitive>> primitives_;
};
#endif

// MatMul, and with `bias` fuse-matmul-add's ai.ramiel.MatMulAdd: the product, then
// its third input, a row of B's columns, added to every row, then its GELU if any.
KernelFactory matMulKernel(bool bias)
{
    return [bias](const KernelContext& c) -> Kernel {
        const bool gelu = bias && c.node.attrString("activation", "") == kGelu;
#if RAMIEL_HAVE_DNNL
        const at::Tensor b = c.isConstant(1) ? c.constants[1] : at::Tensor();
        const std::shared_ptr<OneDnnMatMul> primitive =
            !bias ? OneDnnMatMul::forConstant(b, at::Tensor())
                  : c.isConstant(2) ? OneDnnMatMul::forConstant(b, c.constants[2], gelu) : nullptr;
        const auto batched = std::make_shared<OneDnnBatchedMatMul>();
#endif
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
#if RAMIEL_HAVE_DNNL
            if (primitive && primitive->applies(in[0])) {
                out[0] = (*primitive)(in[0]);
                return;
            }
            at::Tensor y = (*batched)(in[0], in[1]);
            if (!y.defined())
                y = sgemmMatMul(in[0], in[1]);
            if (!y.defined())
                y = at::matmul(in[0], in[1]);
#else
            at::Tensor y = at::matmul(in[0], in[1]);
#endif
            out[0] = !bias ? y : gelu ? at::gelu(y + in[2].reshape({-1})) : y + in[2].reshape({-1});
        };
    };
}

// Gemm, MatMul, MatMulAdd.
void registerMatMulKernels(KernelRegistry& r)
{
    // Det: the determinants of the input's last two dimensions' square matrices.
    r["Det"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            if (x.dim() < 2 || x.size(-1) != x.size(-2))
                throw Error(ErrorKind::Runtime, {}, "the input of shape " + shapeText(x.sizes()) +
                                                        " does not end in square matrices");
            out[0] = at::linalg_det(x);
        };
    };
    r["Gemm"] = [](const KernelContext& c) -> Kernel {
        const double alpha = c.node.attrFloat("alpha", 1.0f), beta = c.node.attrFloat("beta", 1.0f);
        const bool ta = c.node.attrInt("transA", 0) != 0, tb = c.node.attrInt("transB", 0) != 0;
        // A constant B is kept once as [N, K] rows (ONNX's transB layout): a single
        // row of A (batch 1, a classifier head) is then one matrix-vector product
        // over contiguous rows, which OpenBLAS runs 2-3x faster than a 1-row GEMM;
        // for floats Ramiel's own (matrix_vector.h), which also splits it over threads.
        const at::Tensor rowsB = c.isConstant(1) ? (tb ? c.constants[1] : c.constants[1].t()).contiguous() : at::Tensor();
        const at::Tensor constB = rowsB.defined() ? rowsB.t() : at::Tensor();
#if RAMIEL_HAVE_DNNL
        // Several rows by a constant B, C absent or a constant bias row: oneDNN's matmul,
        // the bias added in its kernel (a linear layer on a 2-D batch of tokens).
        const at::Tensor bias = c.isConstant(2) ? c.constants[2] : at::Tensor();
        const bool biasRow = !c.hasInput(2) || (bias.defined() && bias.dim() >= 1 && bias.dim() <= 2 &&
                                                bias.size(-1) == bias.numel() && beta == 1.0);
        const std::shared_ptr<OneDnnMatMul> primitive =
            !ta && alpha == 1.0 && biasRow ? OneDnnMatMul::forConstant(constB, bias) : nullptr;
#endif
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor a = ta ? in[0].t() : in[0];
            const int64_t n = rowsB.defined() ? rowsB.size(0) : 0;
            if (rowsB.defined() && a.dim() == 2 && a.size(0) == 1 && a.scalar_type() == rowsB.scalar_type() &&
                (in.size() < 3 || !in[2].defined() || in[2].numel() == 1 || in[2].numel() == n)) {
                const at::Tensor c = in.size() > 2 ? in[2] : at::Tensor();
                if (rowsB.scalar_type() == at::kFloat) {  // split over the intra-op threads
                    out[0] = matrixVectorProduct(rowsB, a, c, float(alpha), float(beta));
                    return;
                }
                const at::Tensor v = a[0];
                at::Tensor y = in.size() > 2 && in[2].defined()
                                   ? at::addmv(in[2].reshape({-1}).expand({n}), rowsB, v, beta, alpha)
                                   : (alpha == 1.0 ? at::mv(rowsB, v) : at::mv(rowsB, v) * alpha);
                out[0] = y.unsqueeze(0);
                return;
            }
            const at::Tensor b = constB.defined() ? constB : (tb ? in[1].t() : in[1]);
#if RAMIEL_HAVE_DNNL
            if (primitive && a.dim() == 2 && primitive->applies(a)) {
                out[0] = (*primitive)(a);
                return;
            }
            at::Tensor y = sgemmMatMul(a, b);
            if (!y.defined())
                y = at::matmul(a, b);
#else
            at::Tensor y = at::matmul(a, b);
#endif
            if (alpha != 1.0)
                y = y * alpha;
            if (in.size() > 2 && in[2].defined())
                y = beta == 1.0 ? y + in[2] : y + in[2] * beta;
            out[0] = y;
        };
    };
    r["MatMul"] = matMulKernel(false);
    r[std::string(kRamielDomain) + ":" + kMatMulAdd] = matMulKernel(true);
}

// Softmax, LogSoftmax.
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (which takes the log-softmax
// of its scores over axis 1 first, and gives it as its second output): ATen's
// nll_loss on [N, C, d1, ...] and targets [N, d1, ...], the class weights, `ignore_index`
// and the reduction ('mean' divides by the weights of the targets not ignored).
KernelFactory lossKernel(bool softmaxFirst)
{
    return [softmaxFirst](const KernelContext& c) -> Kernel {
        const std::string reduction = c.node.attrString("reduction", "mean");
        int64_t mode = at::Reduction::Mean;
        if (reduction == "none")
            mode = at::Reduction::None;
        else if (reduction == "sum")
            mode = at::Reduction::Sum;
        else if (reduction != "mean")
            c.unsupported("reduction '" + reduction + "' is not none, sum or mean");
        const Attribute* ignore = c.node.attr("ignore_index");
        // ATen ignores -100 by default; a node without ignore_index ignores nothing.
        const int64_t ignoreIndex = ignore ? ignore->i : std::numeric_limits<int64_t>::min();
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& scores = in[0];
            if (scores.dim() < 2)
                throw Error(ErrorKind::Runtime, {}, "the input has rank " + std::to_string(scores.dim()) + ", it needs 2 or more");
            const at::Tensor target = in[1].to(at::kLong);
            if (target.dim() != scores.dim() - 1)
                throw Error(ErrorKind::Runtime, {}, "the targets have rank " + std::to_string(target.dim()) + " where " +
                                                        std::to_string(scores.dim() - 1) + " is expected");
            // ATen reads a class index outside [0, C) that is not ignored past its buffer's end.
            const int64_t classes = scores.size(1);
            const at::Tensor bad = (target < 0).logical_or(target >= classes).logical_and(target != ignoreIndex);
            if (bad.any().item<bool>())
                throw Error(ErrorKind::Runtime, {}, "target " + std::to_string(target.masked_select(bad)[0].item<int64_t>()) +
                                                        " is not a class in [0, " + std::to_string(classes) + ")");
            const at::Tensor logProb = softmaxFirst ? at::log_softmax(scores, 1) : scores;
            const at::Tensor weight = in.size() > 2 && in[2].defined() ? in[2].to(scores.scalar_type()) : at::Tensor();
            out[0] = at::nll_loss_nd(logProb, target, weight, mode, ignoreIndex);
            if (softmaxFirst && out.size() > 1)
                out[1] = logProb;
        };
    };
}

void registerSoftmaxKernels(KernelRegistry& r)
{
    r["NegativeLogLikelihoodLoss"] = lossKernel(false);
    r["SoftmaxCrossEntropyLoss"] = lossKernel(true);
    auto softmax = [](bool log) {
        return [log](const KernelContext& c) -> Kernel {
            const int64_t opset = c.opset();
            const int64_t axisAttr = c.node.attrInt("axis", opset < 13 ? 1 : -1);
            return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                const at::Tensor& x = in[0];
                const int64_t axis = normalizeAxis(axisAttr, x.dim());
                if (!log && axis == x.dim() - 1 && x.scalar_type() == at::kFloat && x.size(axis) > 0) {
                    out[0] = softmaxLastFloat(x);  // the 2-D coercion changes nothing at the last axis
                    return;
                }
                if (opset >= 13) {
                    out[0] = log ? at::log_softmax(x, axis) : at::softmax(x, axis);
                    return;
                }
                // Before opset 13 the input is coerced to 2-D at `axis`.
                int64_t outer = 1;
                for (int64_t i = 0; i < axis; ++i)
                    outer *= x.size(i);
                const at::Tensor flat = x.reshape({outer, x.numel() / std::max<int64_t>(outer, 1)});
                out[0] = (log ? at::log_softmax(flat, 1) : at::softmax(flat, 1)).reshape(x.sizes());
            };
        };
    };
    r["Softmax"] = softmax(false);
    r["LogSoftmax"] = softmax(true);
    // Hardmax: 1 at the first largest value along the axis, 0 elsewhere (2-D coercion before 13).
    r["Hardmax"] = [](const KernelContext& c) -> Kernel {
        const int64_t opset = c.opset();
        const int64_t axisAttr = c.node.attrInt("axis", opset < 13 ? 1 : -1);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            at::Tensor src = x;
            int64_t along = axis;
            if (opset < 13) {
                int64_t outer = 1;
                for (int64_t i = 0; i < axis; ++i)
                    outer *= x.size(i);
                src = x.reshape({outer, x.numel() / std::max<int64_t>(outer, 1)});
                along = 1;
            }
            if (src.numel() == 0) {
                out[0] = at::zeros_like(x);
                return;
            }
            const at::Tensor idx = src.argmax(along, true);
            out[0] = at::zeros_like(src).scatter_(along, idx, 1).reshape(x.sizes());
        };
    };
}

// Inference batch normalization as a per-channel scale and shift, computed once (in
// double precision) from the node's constant statistics, inputs first to first + 3 (scale,
// B, mean, variance); both undefined unless all four are float constants of one dimension.
struct ScaleShift {
    at::Tensor scale, shift;
};

ScaleShift inferenceScaleShift(const KernelContext& c, size_t first, double eps)
{
    for (size_t i = first; i < first + 4; ++i)
        if (!c.isConstant(i) || c.constants[i].scalar_type() != at::kFloat || c.constants[i].dim() != 1 ||
            c.constants[i].numel() != c.constants[first].numel())
            return {};
    const at::Tensor invStd = at::rsqrt(c.constants[first + 3].to(at::kDouble) + eps);
    const at::Tensor a = c.constants[first].to(at::kDouble) * invStd;
    return {a.to(at::kFloat).contiguous(),
            (c.constants[first + 1].to(at::kDouble) - c.constants[first + 2].to(at::kDouble) * a).to(at::kFloat).contiguous()};
}

// BatchNormalization in training (core/ir/batch_norm.h): Y normalized by the batch's mean
// and population variance over every axis but the channels', the running statistics moved
// towards them by 1 - momentum (ONNX's reference), and in opsets 7-13 the batch's own.
Kernel batchNormTraining(const KernelContext& c, double eps)
{
    if (c.node.attrInt("spatial", 1) == 0)
        c.unsupported("training with spatial = 0 (statistics per activation) is not supported");
    const double momentum = c.node.attrFloat("momentum", 0.9f);
    return [eps, momentum](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        if (x.dim() < 2)
            throw Error(ErrorKind::Runtime, {}, "input of rank " + std::to_string(x.dim()) +
                                                    ": batch normalization needs at least 2 (batch, channels)");
        std::vector<int64_t> axes{0}, channel(size_t(x.dim()), 1);
        for (int64_t i = 2; i < x.dim(); ++i)
            axes.push_back(i);
        channel[1] = x.size(1);
        const auto [var, mean] = at::var_mean(x, axes, /*unbiased=*/false);
        const at::Tensor gain = (at::rsqrt(var + eps) * in[1]).reshape(channel);
        out[0] = (x - mean.reshape(channel)) * gain + in[2].reshape(channel);
        const at::Tensor* batch[] = {&mean, &var};
        for (size_t i = 1; i < out.size() && i < 3; ++i)
            out[i] = in[i + 2] * momentum + *batch[i - 1] * (1 - momentum);
        for (size_t i = 3; i < out.size() && i < 5; ++i)  // saved_mean, saved_var (opsets 7-13)
            out[i] = *batch[i - 3];
    };
}

// Batch, instance and layer normalization; local response normalization.
void registerNormalizationKernels(KernelRegistry& r)
{
    r["BatchNormalization"] = [](const KernelContext& c) -> Kernel {
        const double eps = c.node.attrFloat("epsilon", 1e-5f);
        if (batchNormTrains(c.node))
            return batchNormTraining(c, eps);
        if (c.node.attrInt("spatial", 1) == 0)  // before opset 9: statistics per activation
            return [eps](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                const auto sample = in[0].sizes().slice(1);
                auto p = [&](size_t i) {
                    if (in[i].numel() != c10::multiply_integers(sample))
                        throw Error(ErrorKind::Runtime, {},
                                    "statistics per activation (spatial 0) take one value per element of a sample, " +
                                        std::to_string(c10::multiply_integers(sample)) + " here; input " +
                                        std::to_string(i) + " has " + std::to_string(in[i].numel()));
                    return in[i].reshape(sample);
                };
                out[0] = (in[0] - p(3)) * at::rsqrt(p(4) + eps) * p(1) + p(2);
                for (size_t i = 1; i < out.size(); ++i)
                    out[i] = in[std::min<size_t>(i + 2, 4)];
            };
        const ScaleShift folded = c.node.outputs.size() == 1 ? inferenceScaleShift(c, 1, eps) : ScaleShift{};
        return [eps, scale = folded.scale, shift = folded.shift](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            if (scale.defined() && batchNormChannelsLastApplies({in[0]}, scale.numel())) {
                out[0] = batchNormChannelsLast({in[0]}, scale, shift, {});
                return;
            }
            out[0] = at::batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.0, eps, false);
            for (size_t i = 1; i < out.size(); ++i)  // training outputs: the running statistics as given
                out[i] = in[std::min<size_t>(i + 2, 4)];
        };
    };
    // fuse-batchnorm's (core/ir/fused_ops.h): the parts, then the four statistics. On
    // channels-last parts, one pass: each pixel's channels read from their parts, scaled and
    // shifted, and the activation applied to a few pixels at a time while they are in cache.
    r[std::string(kRamielDomain) + ":" + kFusedBatchNorm] = [](const KernelContext& c) -> Kernel {
        const size_t parts = c.node.inputs.size() - 4;
        const double eps = c.node.attrFloat("epsilon", 1e-5f);
        const FusedActivation act = fusedActivation(c);
        const ScaleShift folded = inferenceScaleShift(c, parts, eps);
        return [parts, eps, act, scale = folded.scale, shift = folded.shift](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const std::vector<at::Tensor> xs(in.begin(), in.begin() + std::ptrdiff_t(parts));
            if (scale.defined() && batchNormChannelsLastApplies(xs, scale.numel())) {
                out[0] = batchNormChannelsLast(xs, scale, shift, [&](float* y, int64_t n) { act.applyTo(y, n); });
                return;
            }
            at::Tensor y = at::batch_norm(parts == 1 ? xs[0] : at::cat(xs, 1), in[parts], in[parts + 1],
                                          in[parts + 2], in[parts + 3], false, 0.0, eps, false);
            act.applyTo(y);
            out[0] = y;
        };
    };
    // ONNX GroupNormalization (opset 18: scale and bias per group; 21: per channel) and
    // fuse-group-norm's (core/ir/fused_ops.h: per channel, an activation): on a channels-last
    // float activation Ramiel's two passes, the activation applied while the pixels are in
    // cache; otherwise ATen's. ONNX 1.12 has no schema for the ONNX operator, so its
    // attributes are checked here.
    const KernelFactory groupNormalization = [](const KernelContext& c) -> Kernel {
        const bool perGroup = c.node.domain.empty() && c.node.opset < 21;
        const Attribute* count = c.node.attr("num_groups");
        const Attribute* epsilon = c.node.attr("epsilon");
        auto invalid = [&](const std::string& what) {
            throw Error(ErrorKind::InvalidGraph, {}, "node '" + c.node.name + "' (" + c.node.opType + "): " + what);
        };
        if (!count || count->kind != Attribute::Kind::Int)
            invalid(count ? "attribute 'num_groups' is not an int" : "lacks the required attribute 'num_groups'");
        if (count->i < 1)
            invalid("num_groups " + std::to_string(count->i) + " is below 1");
        if (epsilon && (epsilon->kind != Attribute::Kind::Float || !(epsilon->f >= 0.0f) || !std::isfinite(epsilon->f)))
            invalid("epsilon is not a finite float of at least 0");
        if (c.node.inputs.size() != 3 || c.node.outputs.size() != 1)
            invalid("takes three inputs (X, scale, bias) and gives one output");
        const int64_t groups = count->i;
        const float eps = epsilon ? epsilon->f : 1e-5f;
        const FusedActivation act = c.node.domain.empty() ? FusedActivation{} : fusedActivation(c);
        return [groups, eps, act, perGroup](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            if (x.dim() < 2)
                throw Error(ErrorKind::Runtime, {}, "input of rank " + std::to_string(x.dim()) +
                                                        ": group normalization needs at least 2 (batch, channels)");
            const int64_t channels = x.size(1);
            if (channels % groups)
                throw Error(ErrorKind::Runtime, {}, std::to_string(groups) + " groups do not divide the " +
                                                        std::to_string(channels) + " channels");
            const int64_t expected = perGroup ? groups : channels;
            for (size_t i = 1; i < 3; ++i)
                if (in[i].dim() != 1 || in[i].size(0) != expected)
                    throw Error(ErrorKind::Runtime, {}, std::string(i == 1 ? "scale" : "bias") + " holds " +
                                                            std::to_string(in[i].numel()) + " values, " +
                                                            (perGroup ? "one per group: " : "one per channel: ") +
                                                            std::to_string(expected));
            const at::Tensor scale = perGroup ? in[1].repeat_interleave(channels / groups) : in[1].contiguous();
            const at::Tensor bias = perGroup ? in[2].repeat_interleave(channels / groups) : in[2].contiguous();
            if (groupNormChannelsLastApplies(x, groups) && scale.scalar_type() == at::kFloat &&
                bias.scalar_type() == at::kFloat) {
                out[0] = groupNormChannelsLast(x, groups, scale, bias, eps, [&](float* y, int64_t n) { act.applyTo(y, n); });
                return;
            }
            at::Tensor y = at::group_norm(x, groups, scale, bias, eps);
            act.applyTo(y);
            out[0] = y;
        };
    };
    r["GroupNormalization"] = groupNormalization;
    r[std::string(kRamielDomain) + ":" + kFusedGroupNorm] = groupNormalization;
    r["InstanceNormalization"] = [](const KernelContext& c) -> Kernel {
        const double eps = c.node.attrFloat("epsilon", 1e-5f);
        return [eps](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::instance_norm(in[0], in[1], in[2], {}, {}, true, 0.0, eps, false);
        };
    };
    // ONNX's (opset 17) and fuse-layer-norm's for earlier opsets: the same inputs and attributes.
    const KernelFactory layerNormalization = [](const KernelContext& c) -> Kernel {
        const double eps = c.node.attrFloat("epsilon", 1e-5f);
        const int64_t axisAttr = c.node.attrInt("axis", -1);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            const std::vector<int64_t> dims(x.sizes().begin() + axis, x.sizes().end());
            const at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
            // Float, scale and bias of the normalized shape, no mean or inverse deviation
            // asked for: Ramiel's kernel (vector_math.h; ATen's took 2.5x as long on
            // convnext_tiny's rows of 96).
            if (out.size() == 1 && x.scalar_type() == at::kFloat && in[1].scalar_type() == at::kFloat &&
                in[1].sizes() == at::IntArrayRef(dims) &&
                (!bias.defined() || (bias.scalar_type() == at::kFloat && bias.sizes() == at::IntArrayRef(dims)))) {
                out[0] = layerNormLastFloat(x, in[1], bias, float(eps));
                return;
            }
            std::vector<int64_t> reduce;
            for (int64_t i = axis; i < x.dim(); ++i)
                reduce.push_back(i);
            const at::Tensor xf = x.to(at::kFloat);
            const at::Tensor mean = xf.mean(reduce, true);
            const at::Tensor var = (xf - mean).pow(2).mean(reduce, true);
            const at::Tensor invStd = at::rsqrt(var + eps);
            at::Tensor y = ((xf - mean) * invStd).to(x.scalar_type()) * in[1];
            if (in.size() > 2 && in[2].defined())
                y = y + in[2];
            out[0] = y;
            if (out.size() > 1)
                out[1] = mean;
            if (out.size() > 2)
                out[2] = invStd;
        };
    };
    r["LayerNormalization"] = layerNormalization;
    r[std::string(kRamielDomain) + ":" + kLayerNorm] = layerNormalization;
    // MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9) over `axes`, as ONNX's function body.
    r["MeanVarianceNormalization"] = [](const KernelContext& c) -> Kernel {
        const auto attr = c.node.attr("axes") ? c.node.attrInts("axes") : std::vector<int64_t>{0, 2, 3};
        return [attr](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            std::vector<int64_t> axes;
            for (int64_t a : attr)
                axes.push_back(normalizeAxis(a, x.dim()));
            const at::Tensor mean = x.mean(axes, true);
            const at::Tensor variance = (x * x).mean(axes, true) - mean * mean;
            out[0] = (x - mean) / (variance.sqrt() + 1e-9);
        };
    };
    // LpNormalization: x divided by its L1 or L2 norm along the axis.
    r["LpNormalization"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", -1), p = c.node.attrInt("p", 2);
        if (p != 1 && p != 2)
            c.unsupported("p " + std::to_string(p) + " is not 1 or 2");
        return [axisAttr, p](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            const at::Tensor norm = p == 1 ? x.abs().sum(axis, true) : (x * x).sum(axis, true).sqrt();
            out[0] = x / norm;
        };
    };
    r["LRN"] = [](const KernelContext& c) -> Kernel {
        const int64_t size = c.node.attrInt("size", 1);
        const double alpha = c.node.attrFloat("alpha", 1e-4f), beta = c.node.attrFloat("beta", 0.75f),
                     bias = c.node.attrFloat("bias", 1.0f);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            if (x.numel() == 0) {  // nothing to normalize (the reshape below could not place its -1)
                out[0] = x.clone();
                return;
            }
            // Sum of squares over a window of channels [c - floor((size-1)/2), c + ceil((size-1)/2)].
            at::Tensor sq = (x * x).unsqueeze(1);  // N x 1 x C x ...
            const int64_t before = (size - 1) / 2, after = size - 1 - before;
            std::vector<int64_t> pads(size_t(2 * (x.dim() - 2)), 0);
            pads.push_back(before);
            pads.push_back(after);
            sq = at::constant_pad_nd(sq, pads, 0.0);
            const at::Tensor flat = sq.reshape({x.size(0), 1, sq.size(2), -1});
            const at::Tensor sum = at::avg_pool2d(flat, {size, 1}, {1, 1}).squeeze(1) * double(size);
            out[0] = x / at::pow(sum.reshape(x.sizes()) * (alpha / double(size)) + bias, beta);
        };
    };
}

// Windowed and global pooling.
// LpPool's and GlobalLpPool's p (core/ir/lp_pool_order.h), refused unless positive.
double lpNormOrder(const KernelContext& c)
{
    const double p = lpPoolOrder(c.node);
    if (!(p > 0) || !std::isfinite(p))
        c.unsupported("p " + std::to_string(p) + " is not a positive number");
    return p;
}

void registerPoolingKernels(KernelRegistry& r)
{
    r["MaxPool"] = [](const KernelContext& c) -> Kernel {
        const bool indices = c.node.outputs.size() > 1 && c.node.outputs[1] != kNone;
        const bool columnMajor = c.node.attrInt("storage_order", 0) != 0;
        if (columnMajor && !indices)
            c.unsupported("storage_order = 1 is not supported");
        const Node n = c.node;
        const auto kernel = n.attrInts("kernel_shape");
        if (indices && kernel.size() != 2)
            c.unsupported("the Indices output is supported for 2-D pooling only");
        return [n, kernel, indices, columnMajor](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const Window w = windowOf(n, kernel, spatialSizes(in[0]));
            if (!indices) {
                out[0] = maxPoolChannelsLastApplies(in[0], w) ? maxPoolChannelsLast(in[0], w)
                         : maxPool3dApplies(in[0], w)         ? maxPool3d(in[0], w)
                                                              : pool(in[0], w, true, true);
                return;
            }
            // ONNX's indices count over the whole tensor (row- or column-major within each plane).
            if (!w.symmetric())
                throw std::runtime_error("the Indices output needs symmetric pads");
            const at::Tensor& x = in[0];
            auto [values, idx] = at::max_pool2d_with_indices(x, w.kernel, w.strides, w.padBegin, w.dilations, w.ceil);
            const int64_t H = x.size(2), W = x.size(3);
            if (columnMajor)
                idx = (idx % W) * H + idx.div(W, "floor");
            const at::Tensor plane = at::arange(x.size(0) * x.size(1), at::kLong).reshape({x.size(0), x.size(1), 1, 1}) * (H * W);
            out[0] = values;
            out[1] = idx + plane;
        };
    };
    r["AveragePool"] = [](const KernelContext& c) -> Kernel {
        const Node n = c.node;
        const auto kernel = n.attrInts("kernel_shape");
        const bool include = n.attrInt("count_include_pad", 0) != 0;
        return [n, kernel, include](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const Window w = windowOf(n, kernel, spatialSizes(in[0]));
            out[0] = avgPoolChannelsLastApplies(in[0], w) ? avgPoolChannelsLast(in[0], w, include)
                                                           : pool(in[0], w, false, include);
        };
    };
    r["GlobalAveragePool"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            if (isChannelsLastFloat(in[0])) {
                out[0] = globalAveragePoolChannelsLast(in[0]);
                return;
            }
            std::vector<int64_t> dims;
            for (int64_t i = 2; i < in[0].dim(); ++i)
                dims.push_back(i);
            out[0] = in[0].mean(dims, true);
        };
    };
    // LpPool: (the sum over each window of |x|^p)^(1/p), pads counted as zeros: |x|^p
    // padded explicitly, then averaged over whole windows and scaled by their size.
    r["LpPool"] = [](const KernelContext& c) -> Kernel {
        const Node n = c.node;
        const auto kernel = n.attrInts("kernel_shape");
        const double p = lpNormOrder(c);
        for (int64_t d : n.attrInts("dilations"))
            if (d != 1)
                c.unsupported("dilations other than 1 are not supported");
        if (kernel.empty() || kernel.size() > 3)
            c.unsupported("kernel_shape must have 1, 2 or 3 dimensions");
        return [n, kernel, p](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            if (in[0].dim() != int64_t(kernel.size()) + 2)
                throw Error(ErrorKind::Runtime, {}, "the input has rank " + std::to_string(in[0].dim()) + " where " +
                                                        std::to_string(kernel.size() + 2) + " is expected");
            const Window w = windowOf(n, kernel, spatialSizes(in[0]));
            const at::Tensor x = at::constant_pad_nd(at::abs(in[0]).pow(p), w.atenPads(), 0.0);
            double volume = 1;
            for (int64_t k : kernel)
                volume *= double(k);
            const std::vector<int64_t> none(kernel.size(), 0);
            const at::Tensor mean = kernel.size() == 1 ? at::avg_pool1d(x, w.kernel, w.strides, none, w.ceil)
                                    : kernel.size() == 2 ? at::avg_pool2d(x, w.kernel, w.strides, none, w.ceil)
                                                         : at::avg_pool3d(x, w.kernel, w.strides, none, w.ceil);
            out[0] = (mean * volume).pow(1.0 / p);
        };
    };
    // GlobalLpPool: the p-norm of each channel's spatial values.
    r["GlobalLpPool"] = [](const KernelContext& c) -> Kernel {
        const double p = lpNormOrder(c);
        return [p](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<int64_t> dims;
            for (int64_t i = 2; i < in[0].dim(); ++i)
                dims.push_back(i);
            out[0] = at::linalg_vector_norm(in[0], p, dims, true);
        };
    };
    r["GlobalMaxPool"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<int64_t> dims;
            for (int64_t i = 2; i < in[0].dim(); ++i)
                dims.push_back(i);
            out[0] = in[0].amax(dims, true);
        };
    };
}

}  // namespace

void registerNeuralKernels(KernelRegistry& r)
{
    registerMatMulKernels(r);
    registerSoftmaxKernels(r);
    registerNormalizationKernels(r);
    registerPoolingKernels(r);
}

}  // namespace ramiel
