// Indexing and rearranging operators: the Gather/Scatter family, NonZero,
// OneHot, CumSum, Trilu, DepthToSpace/SpaceToDepth, Einsum, MaxUnpool,
// GridSample, and the detection operators RoiAlign and NonMaxSuppression. Indices may be negative (counted from the end, as ONNX allows);
// out-of-range indices are a run-time error, never a read out of bounds.
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/kernel.h"
#include "core/runtime/torch/target_clones.h"
#include "core/util/error.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>
#include <vector>

namespace ramiel {

namespace {

[[noreturn]] void fail(const std::string& what) { throw Error(ErrorKind::Runtime, {}, what); }

// Indices as int64 with negative values counted from `size` (per axis when `sizes` is a row).
at::Tensor wrapIndices(const at::Tensor& idx, int64_t size)
{
    const at::Tensor i = idx.to(at::kLong);
    return at::where(i < 0, i + size, i);
}

void checkRange(const at::Tensor& idx, int64_t size, const char* what)
{
    if (idx.numel() == 0)
        return;
    const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
    if (lo < 0 || hi >= size)
        fail(std::string(what) + " index " + std::to_string(lo < 0 ? lo : hi) + " is out of range for a dimension of size " +
             std::to_string(size));
}

// The reduction attribute of ScatterND / ScatterElements: none, add, mul (16), max, min (18).
std::string scatterReduction(const KernelContext& c)
{
    const std::string r = c.node.attrString("reduction", "none");
    if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
        c.unsupported("reduction '" + r + "' is not one of none, add, mul, max, min");
    return r;
}

// ScatterND's and GatherND's linear index into the first k dimensions of `dims`
// (from `first`): indices [..., k] -> [...].
at::Tensor linearIndex(const at::Tensor& indices, at::IntArrayRef dims, int64_t first, const char* op)
{
    const int64_t k = indices.size(-1);
    if (k < 1 || first + k > int64_t(dims.size()))
        fail(std::string(op) + ": indices " + shapeText(indices.sizes()) + " index " + std::to_string(k) +
             " dimensions of data " + shapeText(dims) + (first ? " after its batch dimensions" : ""));
    const at::Tensor idx = indices.to(at::kLong).contiguous();
    at::Tensor lin = at::empty(idx.sizes().slice(0, idx.dim() - 1), at::kLong);
    const int64_t* ip = idx.data_ptr<int64_t>();
    int64_t* lp = lin.data_ptr<int64_t>();
    for (int64_t row = 0, rows = lin.numel(); row < rows; ++row) {
        int64_t at = 0;
        for (int64_t j = 0; j < k; ++j) {
            const int64_t size = dims[size_t(first + j)];
            int64_t i = ip[row * k + j];
            i = i < 0 ? i + size : i;
            if (i < 0 || i >= size)
                fail(std::string(op) + " index " + std::to_string(i) + " is out of range for a dimension of size " +
                     std::to_string(size));
            at = at * size + i;
        }
        lp[row] = at;
    }
    return lin;
}

Kernel scatterNDKernel(const KernelContext& c)
{
    const std::string reduction = scatterReduction(c);
    return [reduction](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& data = in[0];
        const at::Tensor& indices = in[1];
        if (indices.dim() < 1)
            fail("ScatterND: indices must have rank 1 or more");
        const int64_t k = indices.size(-1);
        const at::Tensor lin = linearIndex(indices, data.sizes(), 0, "ScatterND").reshape({-1});
        // data as [positions, rest...], updates as [indices..., rest...] -> [n, rest...]
        std::vector<int64_t> flat{-1};
        flat.insert(flat.end(), data.sizes().begin() + k, data.sizes().end());
        std::vector<int64_t> want(indices.sizes().begin(), indices.sizes().end() - 1);
        want.insert(want.end(), data.sizes().begin() + k, data.sizes().end());
        if (in[2].sizes().vec() != want)
            fail("ScatterND: updates " + shapeText(in[2].sizes()) + ", expected " + shapeText(want));
        at::Tensor y = data.clone().reshape(flat);
        const at::Tensor upd = in[2].to(data.scalar_type()).reshape(flat);
        if (reduction == "none")
            y.index_copy_(0, lin, upd);
        else if (reduction == "add")
            y.index_add_(0, lin, upd);
        else
            y.index_reduce_(0, lin, upd, reduction == "mul" ? "prod" : reduction == "max" ? "amax" : "amin", true);
        out[0] = y.reshape(data.sizes());
    };
}

// Whether `indices` hold one index per slice along `axis`: the same at every position of the
// other axes (a size of 1, or a stride of 0: an Expand's view).
bool oneIndexPerSlice(const at::Tensor& indices, int64_t axis)
{
    for (int64_t d = 0; d < indices.dim(); ++d)
        if (d != axis && indices.size(d) > 1 && indices.stride(d) != 0)
            return false;
    return indices.dim() > 0;
}

// ScatterElements without a reduction where each slice of the updates along `axis` has one
// index: the slices are copied whole, in order (a later one wins, as in ATen's loop), into
// `data` itself where nothing else holds it. torchvision's detectors merge their pooled
// regions so, level by level ([R, 256, 7, 7] of indices expanded from [R, 1, 1, 1]).
at::Tensor scatterSlices(const at::Tensor& data, int64_t axis, const at::Tensor& indices, const at::Tensor& updates)
{
    at::Tensor idx = indices;
    for (int64_t d = indices.dim(); d-- > 0;)
        if (d != axis)
            idx = idx.select(d, 0);
    idx = wrapIndices(idx, data.size(axis)).contiguous();
    checkRange(idx, data.size(axis), "ScatterElements");
    at::Tensor y = heldOnlyHere(data) && data.is_non_overlapping_and_dense() ? data : data.clone();
    at::Tensor target = y;
    for (int64_t d = 0; d < y.dim(); ++d)
        if (d != axis)
            target = target.narrow(d, 0, updates.size(d));
    const int64_t* ip = idx.data_ptr<int64_t>();
    for (int64_t i = 0; i < idx.numel(); ++i)
        target.select(axis, ip[i]).copy_(updates.select(axis, i));
    return y;
}

// ScatterElements, and Scatter (its name before opset 11, no reduction).
Kernel scatterElementsKernel(const KernelContext& c)
{
    const std::string reduction = scatterReduction(c);
    const int64_t axisAttr = c.node.attrInt("axis", 0);
    return [reduction, axisAttr](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& data = in[0];
        const int64_t axis = normalizeAxis(axisAttr, data.dim());
        if (in[1].dim() != data.dim() || in[1].sizes() != in[2].sizes())
            fail("ScatterElements: indices " + shapeText(in[1].sizes()) + " and updates " + shapeText(in[2].sizes()) +
                 " must have the same shape and data's rank " + std::to_string(data.dim()));
        for (int64_t d = 0; d < data.dim(); ++d)
            if (d != axis && in[1].size(d) > data.size(d))
                fail("ScatterElements: indices " + shapeText(in[1].sizes()) + " are larger than data " +
                     shapeText(data.sizes()) + " on axis " + std::to_string(d));
        const at::Tensor upd = in[2].to(data.scalar_type());
        if (reduction == "none" && oneIndexPerSlice(in[1], axis)) {
            out[0] = scatterSlices(data, axis, in[1], upd);
            return;
        }
        const at::Tensor idx = wrapIndices(in[1], data.size(axis));
        checkRange(idx, data.size(axis), "ScatterElements");
        if (reduction == "none")
            out[0] = at::scatter(data, axis, idx, upd);
        else if (reduction == "add")
            out[0] = at::scatter_add(data, axis, idx, upd);
        else
            out[0] = at::scatter_reduce(data, axis, idx, upd,
                                        reduction == "mul" ? "prod" : reduction == "max" ? "amax" : "amin", true);
    };
}

Kernel gatherElementsKernel(const KernelContext& c)
{
    const int64_t axisAttr = c.node.attrInt("axis", 0);
    return [axisAttr](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& data = in[0];
        const int64_t axis = normalizeAxis(axisAttr, data.dim());
        if (in[1].dim() != data.dim())
            fail("GatherElements: indices " + shapeText(in[1].sizes()) + " must have data's rank " + std::to_string(data.dim()));
        const at::Tensor idx = wrapIndices(in[1], data.size(axis));
        checkRange(idx, data.size(axis), "GatherElements");
        out[0] = at::gather(data, axis, idx);
    };
}

Kernel gatherNDKernel(const KernelContext& c)
{
    const int64_t b = c.node.attrInt("batch_dims", 0);
    return [b](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& data = in[0];
        const at::Tensor& indices = in[1];
        if (b < 0 || indices.dim() < b + 1 || data.dim() < b + 1)
            fail("GatherND: batch_dims " + std::to_string(b) + " needs indices and data of rank " + std::to_string(b + 1) +
                 " or more");
        for (int64_t i = 0; i < b; ++i)
            if (data.size(i) != indices.size(i))
                fail("GatherND: the batch dimensions of data " + shapeText(data.sizes()) + " and indices " +
                     shapeText(indices.sizes()) + " differ");
        const int64_t k = indices.size(-1);
        const at::Tensor lin = linearIndex(indices, data.sizes(), b, "GatherND");  // [batch..., m...]
        int64_t batch = 1, positions = 1;
        for (int64_t i = 0; i < b; ++i)
            batch *= data.size(i);
        for (int64_t i = b; i < b + k; ++i)
            positions *= data.size(i);
        std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end() - 1);
        shape.insert(shape.end(), data.sizes().begin() + b + k, data.sizes().end());
        // Each index picks a slice of the rest of the dimensions: copied whole.
        const at::Tensor source = data.contiguous();
        at::Tensor y = at::empty(shape, data.options());
        const int64_t rows = lin.numel(), perBatch = batch > 0 ? rows / batch : 0;
        const size_t slice = size_t(source.numel() / std::max<int64_t>(batch * positions, 1)) * source.element_size();
        const char* from = static_cast<const char*>(source.data_ptr());
        char* to = static_cast<char*>(y.data_ptr());
        const int64_t* where = lin.data_ptr<int64_t>();
        for (int64_t r = 0; r < rows; ++r)
            std::memcpy(to + size_t(r) * slice, from + size_t((r / perBatch) * positions + where[r]) * slice, slice);
        out[0] = y;
    };
}

Kernel nonZeroKernel(const KernelContext&)
{
    return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        // ATen: [count, rank]; ONNX: [rank, count]. A scalar counts as one element of
        // rank 1, as NumPy's nonzero (ONNX's reference) and ONNX Runtime take it.
        out[0] = at::nonzero(in[0].dim() == 0 ? in[0].reshape({1}) : in[0]).t().contiguous();
    };
}

Kernel oneHotKernel(const KernelContext& c)
{
    const int64_t axisAttr = c.node.attrInt("axis", -1);
    return [axisAttr](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        if (in[1].numel() != 1)
            fail("OneHot: depth must hold one value, it holds " + std::to_string(in[1].numel()));
        if (in[2].numel() != 2)
            fail("OneHot: values must hold [off, on], it holds " + std::to_string(in[2].numel()) + " values");
        const double given = in[1].to(at::kDouble).item<double>();
        if (!(given >= 1) || given > double(INT32_MAX))  // also NaN; converting larger is undefined
            fail("OneHot: depth " + (std::ostringstream() << given).str() + " must be between 1 and " +
                 std::to_string(INT32_MAX));
        const int64_t depth = int64_t(given);
        const int64_t axis = normalizeAxis(axisAttr, in[0].dim() + 1);
        const at::Tensor idx = wrapIndices(in[0].to(at::kDouble).floor(), depth);
        const at::Tensor hot = idx.unsqueeze(-1) == at::arange(depth, at::kLong);  // out-of-range: no hot entry
        const at::Tensor values = in[2].reshape({2});
        out[0] = at::where(hot, values[1], values[0]).movedim(-1, axis).contiguous();
    };
}

Kernel cumSumKernel(const KernelContext& c)
{
    const bool exclusive = c.node.attrInt("exclusive", 0) != 0, reverse = c.node.attrInt("reverse", 0) != 0;
    return [exclusive, reverse](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        if (in[1].numel() != 1)
            fail("CumSum: axis must hold one value, it holds " + std::to_string(in[1].numel()));
        const at::Tensor& x = in[0];
        const int64_t axis = normalizeAxis(in[1].to(at::kLong).item<int64_t>(), x.dim());
        at::Tensor y = reverse ? x.flip(axis) : x;
        y = y.cumsum(axis, x.scalar_type());
        if (exclusive && x.size(axis) > 0) {
            // Shift by one along the axis: the first sum is 0.
            y = at::cat({at::zeros_like(y.narrow(axis, 0, 1)), y.narrow(axis, 0, x.size(axis) - 1)}, axis);
        }
        out[0] = reverse ? y.flip(axis) : y;
    };
}

Kernel triluKernel(const KernelContext& c)
{
    const bool upper = c.node.attrInt("upper", 1) != 0;
    return [upper](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        if (in[0].dim() < 2)
            fail("Trilu: the input has rank " + std::to_string(in[0].dim()) + ", it needs 2 or more");
        int64_t k = 0;
        if (in.size() > 1 && in[1].defined()) {
            if (in[1].numel() != 1)
                fail("Trilu: k must hold one value, it holds " + std::to_string(in[1].numel()));
            k = in[1].to(at::kLong).item<int64_t>();
        }
        // ATen's triu/tril reject a k far beyond the matrix on some paths: clamp (same result).
        const int64_t limit = in[0].size(-1) + in[0].size(-2) + 1;
        k = std::clamp<int64_t>(k, -limit, limit);
        out[0] = upper ? at::triu(in[0], k) : at::tril(in[0], k);
    };
}

// EyeLike: a matrix of the input's shape, ones on diagonal k, zeros elsewhere, of
// the node's dtype (the input's by default).
Kernel eyeLikeKernel(const KernelContext& c)
{
    const int64_t k = c.node.attrInt("k", 0);
    const std::optional<at::ScalarType> type = c.elementTypeAttr("dtype", std::nullopt);
    return [k, type](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        if (in[0].dim() != 2)
            fail("EyeLike: the input has rank " + std::to_string(in[0].dim()) + ", it needs 2");
        const int64_t rows = in[0].size(0), cols = in[0].size(1);
        at::Tensor y = at::zeros({rows, cols}, in[0].options().dtype(type.value_or(in[0].scalar_type())));
        if (k < cols && k > -rows)
            y.diagonal(k).fill_(1);
        out[0] = y;
    };
}

// Compress: the slices along `axis` (of the flattened input without one) whose
// condition is true; slices past the condition's length are left out.
Kernel compressKernel(const KernelContext& c)
{
    const Attribute* axisAttr = c.node.attr("axis");
    const std::optional<int64_t> axis = axisAttr ? std::optional<int64_t>(axisAttr->i) : std::nullopt;
    return [axis](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& condition = in[1];
        if (condition.dim() != 1)
            fail("Compress: the condition has rank " + std::to_string(condition.dim()) + ", it needs 1");
        const at::Tensor x = axis ? in[0] : in[0].reshape({-1});
        const int64_t a = axis ? normalizeAxis(*axis, x.dim()) : 0;
        if (condition.size(0) > x.size(a))
            fail("Compress: the condition has " + std::to_string(condition.size(0)) + " values, more than the " +
                 std::to_string(x.size(a)) + " slices of axis " + std::to_string(a));
        out[0] = x.index_select(a, at::nonzero(condition.to(at::kBool)).reshape({-1}));
    };
}

// Unique: the distinct values (or slices along `axis`), sorted or in the order they
// first appear, with the index of each one's first appearance, the index of each
// input element's (or slice's) distinct value, and how often each appears.
Kernel uniqueKernel(const KernelContext& c)
{
    const bool sorted = c.node.attrInt("sorted", 1) != 0;
    const Attribute* axisAttr = c.node.attr("axis");
    const std::optional<int64_t> axis = axisAttr ? std::optional<int64_t>(axisAttr->i) : std::nullopt;
    return [sorted, axis](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor x = axis ? in[0] : in[0].reshape({-1});
        const int64_t a = axis ? normalizeAxis(*axis, x.dim()) : 0;
        at::Tensor y, inverse, counts;
        std::tie(y, inverse, counts) = axis ? at::unique_dim(x, a, true, true, true) : at::_unique2(x, true, true, true);
        inverse = inverse.reshape({-1});
        const int64_t n = x.size(a), distinct = counts.numel();
        const at::Tensor first = at::full({distinct}, n, at::kLong)
                                     .scatter_reduce(0, inverse, at::arange(n, at::kLong), "amin", /*include_self=*/true);
        if (sorted) {
            out[0] = y;
            if (out.size() > 1)
                out[1] = first;
            if (out.size() > 2)
                out[2] = inverse;
            if (out.size() > 3)
                out[3] = counts;
            return;
        }
        const at::Tensor order = at::argsort(first);  // distinct values by first appearance
        const at::Tensor rank = at::empty_like(order).scatter_(0, order, at::arange(distinct, at::kLong));
        out[0] = y.index_select(a, order);
        if (out.size() > 1)
            out[1] = first.index_select(0, order);
        if (out.size() > 2)
            out[2] = rank.index_select(0, inverse);
        if (out.size() > 3)
            out[3] = counts.index_select(0, order);
    };
}

// ReverseSequence: along the time axis, the first sequence_lens[b] slices of each
// batch entry b in reverse order, the rest as they are.
Kernel reverseSequenceKernel(const KernelContext& c)
{
    const int64_t batchAxis = c.node.attrInt("batch_axis", 1), timeAxis = c.node.attrInt("time_axis", 0);
    if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
        c.unsupported("batch_axis " + std::to_string(batchAxis) + " and time_axis " + std::to_string(timeAxis) +
                      " are not 0 and 1");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        if (x.dim() < 2)
            fail("ReverseSequence: the input has rank " + std::to_string(x.dim()) + ", it needs 2 or more");
        const int64_t steps = x.size(timeAxis), batch = x.size(batchAxis);
        const std::vector<int64_t> lengths = intsOf(in[1]);
        if (in[1].dim() != 1 || int64_t(lengths.size()) != batch)
            fail("ReverseSequence: sequence_lens has shape " + shapeText(in[1].sizes()) + " where [" +
                 std::to_string(batch) + "] is expected");
        at::Tensor index = at::empty(timeAxis == 0 ? std::vector<int64_t>{steps, batch} : std::vector<int64_t>{batch, steps},
                                     at::kLong);
        int64_t* idx = index.data_ptr<int64_t>();
        for (int64_t b = 0; b < batch; ++b) {
            const int64_t len = lengths[size_t(b)];
            if (len < 0 || len > steps)
                fail("ReverseSequence: sequence length " + std::to_string(len) + " is outside [0, " +
                     std::to_string(steps) + "]");
            for (int64_t t = 0; t < steps; ++t)
                idx[timeAxis == 0 ? t * batch + b : b * steps + t] = t < len ? len - 1 - t : t;
        }
        std::vector<int64_t> shape = index.sizes().vec();
        shape.resize(size_t(x.dim()), 1);
        out[0] = at::gather(x, timeAxis, index.view(shape).expand(x.sizes()));
    };
}

// DepthToSpace (`toSpace`) or SpaceToDepth on an N x C x H x W input.
KernelFactory depthSpace(bool toSpace)
{
    return [toSpace](const KernelContext& c) -> Kernel {
        const int64_t b = c.node.attrInt("blocksize", 0);
        const std::string mode = c.node.attrString("mode", "DCR");
        if (b < 1)
            c.unsupported("blocksize " + std::to_string(b) + " must be positive");
        if (toSpace && mode != "DCR" && mode != "CRD")
            c.unsupported("mode '" + mode + "' is not DCR or CRD");
        const bool crd = mode == "CRD";
        return [toSpace, b, crd](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const char* op = toSpace ? "DepthToSpace" : "SpaceToDepth";
            if (x.dim() != 4)
                fail(std::string(op) + ": the input " + shapeText(x.sizes()) + " must have rank 4 (N, C, H, W)");
            const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
            if (toSpace) {
                if (C % (b * b) != 0)
                    fail(std::string(op) + ": " + std::to_string(C) + " channels are not a multiple of blocksize² " +
                         std::to_string(b * b));
                const int64_t c2 = C / (b * b);
                const at::Tensor y = crd ? x.reshape({N, c2, b, b, H, W}).permute({0, 1, 4, 2, 5, 3})
                                         : x.reshape({N, b, b, c2, H, W}).permute({0, 3, 4, 1, 5, 2});
                out[0] = y.reshape({N, c2, H * b, W * b});
                return;
            }
            if (H % b != 0 || W % b != 0)
                fail(std::string(op) + ": height " + std::to_string(H) + " and width " + std::to_string(W) +
                     " must be multiples of blocksize " + std::to_string(b));
            out[0] = x.reshape({N, C, H / b, b, W / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({N, C * b * b, H / b, W / b});
        };
    };
}

Kernel einsumKernel(const KernelContext& c)
{
    const std::string equation = c.node.attrString("equation", "");
    if (equation.empty())
        c.unsupported("the equation is empty");
    return [equation](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        std::vector<at::Tensor> operands;
        for (const at::Tensor& t : in)
            operands.push_back(t);
        out[0] = at::einsum(equation, operands);
    };
}

// MaxUnpool: X's values placed at MaxPool's flat indices in a zero tensor.
Kernel maxUnpoolKernel(const KernelContext& c)
{
    const auto kernel = c.node.attrInts("kernel_shape");
    const auto stridesAttr = c.node.attrInts("strides");
    const auto pads = c.node.attrInts("pads");
    if (kernel.empty())
        c.unsupported("kernel_shape is required");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        const int64_t d = int64_t(kernel.size());
        if (x.dim() != d + 2)
            fail("MaxUnpool: the input " + shapeText(x.sizes()) + " needs rank " + std::to_string(d + 2) +
                 " for a kernel over " + std::to_string(d) + " dimensions");
        if (in[1].sizes() != x.sizes())
            fail("MaxUnpool: indices " + shapeText(in[1].sizes()) + " and the input " + shapeText(x.sizes()) + " differ");
        // The indices count over the shape the pooling came from; a larger output_shape
        // pads that with zeros at the end of each spatial dimension (as ONNX Runtime does).
        std::vector<int64_t> shape{x.size(0), x.size(1)};
        for (int64_t i = 0; i < d; ++i) {
            const int64_t s = stridesAttr.empty() ? 1 : stridesAttr[size_t(i)];
            const int64_t p = pads.empty() ? 0 : pads[size_t(i)] + pads[size_t(i + d)];
            shape.push_back((x.size(i + 2) - 1) * s + kernel[size_t(i)] - p);
        }
        int64_t total = 1;
        for (int64_t s : shape) {
            if (s < 0)
                fail("MaxUnpool: the output shape " + shapeText(shape) + " has a negative size");
            total *= s;
        }
        const at::Tensor idx = in[1].to(at::kLong).reshape({-1});
        checkRange(idx, total, "MaxUnpool");
        at::Tensor y = at::zeros({total}, x.options()).index_copy_(0, idx, x.reshape({-1})).reshape(shape);
        if (in.size() > 2 && in[2].defined()) {
            const std::vector<int64_t> want = intsOf(in[2]);
            if (int64_t(want.size()) != x.dim())
                fail("MaxUnpool: output_shape has " + std::to_string(want.size()) + " values, the input's rank is " +
                     std::to_string(x.dim()));
            std::vector<int64_t> pad;  // ATen order: last dimension first
            for (int64_t i = x.dim(); i-- > 0;) {
                if (want[size_t(i)] < shape[size_t(i)] || (i < 2 && want[size_t(i)] != shape[size_t(i)]))
                    fail("MaxUnpool: output_shape " + shapeText(want) + " is smaller than " + shapeText(shape) +
                         " or changes batch or channels");
                if (i >= 2) {
                    pad.push_back(0);
                    pad.push_back(want[size_t(i)] - shape[size_t(i)]);
                }
            }
            y = at::constant_pad_nd(y, pad, 0.0);
        }
        out[0] = y;
    };
}

Kernel gridSampleKernel(const KernelContext& c)
{
    const std::string mode = c.node.attrString("mode", c.opset() < 20 ? "bilinear" : "linear");
    const std::string padding = c.node.attrString("padding_mode", "zeros");
    const bool alignCorners = c.node.attrInt("align_corners", 0) != 0;
    int64_t interpolation = 0;  // ATen: 0 bilinear, 1 nearest, 2 bicubic
    if (mode == "bilinear" || mode == "linear")
        interpolation = 0;
    else if (mode == "nearest")
        interpolation = 1;
    else if (mode == "bicubic" || mode == "cubic")
        interpolation = 2;
    else
        c.unsupported("mode '" + mode + "' is not bilinear, nearest or bicubic");
    int64_t pad = 0;  // ATen: 0 zeros, 1 border, 2 reflection
    if (padding == "border")
        pad = 1;
    else if (padding == "reflection")
        pad = 2;
    else if (padding != "zeros")
        c.unsupported("padding_mode '" + padding + "' is not zeros, border or reflection");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        const at::Tensor& grid = in[1];
        if (x.dim() != 4 || grid.dim() != 4 || grid.size(0) != x.size(0) || grid.size(3) != 2)
            fail("GridSample: input " + shapeText(x.sizes()) + " and grid " + shapeText(grid.sizes()) +
                 " must be N x C x H x W and N x H_out x W_out x 2");
        if (!at::isFloatingType(x.scalar_type()))
            fail("GridSample: the input must be floating point");
        out[0] = at::grid_sampler(x, grid.to(x.scalar_type()), interpolation, pad, alignCorners);
    };
}

// RoiAlign's bilinear samples along one axis of a region: for each of the bins' sample
// positions, the two neighbouring rows (or columns), their weights, and whether the position
// lies on the image (within one pixel of it). As ONNX Runtime computes them, in double precision.
struct RoiAxisSample {
    int64_t low, high;
    double lowWeight, highWeight;
    bool inside;
};

std::vector<RoiAxisSample> roiAxisSamples(double start, double bin, int64_t bins, int64_t grid, int64_t size)
{
    std::vector<RoiAxisSample> samples;
    samples.reserve(size_t(bins * std::max<int64_t>(grid, 0)));
    for (int64_t b = 0; b < bins; ++b)
        for (int64_t i = 0; i < grid; ++i) {
            double s = start + double(b) * bin + (double(i) + 0.5) * bin / double(grid);
            if (s < -1.0 || s > double(size)) {
                samples.push_back({0, 0, 0.0, 0.0, false});
                continue;
            }
            s = std::max(s, 0.0);
            int64_t low = int64_t(s), high = low + 1;
            if (low >= size - 1) {  // on the last row: that row alone
                high = low = size - 1;
                s = double(low);
            }
            const double l = s - double(low);
            samples.push_back({low, high, 1 - l, l, true});
        }
    return samples;
}

// acc[c] += w0 p0[c] + w1 p1[c] + w2 p2[c] + w3 p3[c] for each of n channels: one bilinear
// sample of RoiAlign's average, in double precision.
template <typename T>
void roiSampleAddLoop(double* __restrict acc, int64_t n, const T* p0, const T* p1, const T* p2, const T* p3, double w0,
                      double w1, double w2, double w3)
{
    for (int64_t c = 0; c < n; ++c)
        acc[c] += w0 * double(p0[c]) + w1 * double(p1[c]) + w2 * double(p2[c]) + w3 * double(p3[c]);
}
RAMIEL_CLONES void roiSampleAdd(double* acc, int64_t n, const float* p0, const float* p1, const float* p2, const float* p3,
                                double w0, double w1, double w2, double w3)
{
    roiSampleAddLoop(acc, n, p0, p1, p2, p3, w0, w1, w2, w3);
}
RAMIEL_CLONES void roiSampleAdd(double* acc, int64_t n, const double* p0, const double* p1, const double* p2,
                                const double* p3, double w0, double w1, double w2, double w3)
{
    roiSampleAddLoop(acc, n, p0, p1, p2, p3, w0, w1, w2, w3);
}

// RoiAlign: each region of interest pooled to output_height x output_width bins, each bin
// the average (or maximum) of bilinear samples, as ONNX Runtime computes it. The sample
// positions are worked out once a region, then each sample is read for all channels at once
// (channels-last), regions shared among the intra-op threads.
Kernel roiAlignKernel(const KernelContext& c)
{
    const std::string mode = c.node.attrString("mode", "avg");
    if (mode != "avg" && mode != "max")
        c.unsupported("mode '" + mode + "' is not avg or max");
    const int64_t outH = c.node.attrInt("output_height", 1), outW = c.node.attrInt("output_width", 1);
    const int64_t ratio = c.node.attrInt("sampling_ratio", 0);
    const double scale = c.node.attrFloat("spatial_scale", 1.0f);
    const std::string coord = c.node.attrString("coordinate_transformation_mode", c.opset() < 16 ? "output_half_pixel" : "half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
        c.unsupported("coordinate_transformation_mode '" + coord + "' is not half_pixel or output_half_pixel");
    if (outH < 1 || outW < 1 || ratio < 0)
        c.unsupported("output_height, output_width must be positive and sampling_ratio not negative");
    const bool halfPixel = coord == "half_pixel", max = mode == "max";
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        if (x.dim() != 4 || in[1].dim() != 2 || in[1].size(1) != 4 || in[2].dim() != 1 || in[2].size(0) != in[1].size(0))
            fail("RoiAlign: X " + shapeText(x.sizes()) + ", rois " + shapeText(in[1].sizes()) + " and batch_indices " +
                 shapeText(in[2].sizes()) + " must be N x C x H x W, R x 4 and R");
        const at::ScalarType type = x.scalar_type() == at::kFloat ? at::kFloat : at::kDouble;
        const at::Tensor X = x.to(type).contiguous(at::MemoryFormat::ChannelsLast);
        const at::Tensor rois = in[1].to(at::kDouble).contiguous();
        const at::Tensor batch = in[2].to(at::kLong).contiguous();
        const int64_t N = X.size(0), C = X.size(1), H = X.size(2), W = X.size(3), R = rois.size(0);
        checkRange(batch, N, "RoiAlign batch");
        const double* rp = rois.data_ptr<double>();
        const double offset = halfPixel ? 0.5 : 0.0;
        struct Region {
            double x0, y0, binW, binH;
            int64_t gridH, gridW;
        };
        std::vector<Region> regions(static_cast<size_t>(R));
        for (int64_t r = 0; r < R; ++r) {
            const double x0 = rp[r * 4] * scale - offset, y0 = rp[r * 4 + 1] * scale - offset;
            double w = rp[r * 4 + 2] * scale - offset - x0, h = rp[r * 4 + 3] * scale - offset - y0;
            if (!halfPixel) {
                w = std::max(w, 1.0);
                h = std::max(h, 1.0);
            }
            if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(w) || !std::isfinite(h))
                fail("RoiAlign: region " + std::to_string(r) + " is not finite");
            // Adaptive sampling takes as many samples as a bin is wide: bounded (four times the
            // image's pixels, or 64 x 64 a bin), so that an absurd region fails, not runs for hours.
            const double gridH = ratio > 0 ? double(ratio) : std::ceil(h / double(outH));
            const double gridW = ratio > 0 ? double(ratio) : std::ceil(w / double(outW));
            const double samples = std::abs(gridH * gridW) * double(outH * outW);
            const double most = std::max(4.0 * double(H + outH) * double(W + outW), 4096.0 * double(outH * outW));
            if (samples > most)
                fail("RoiAlign: region " + std::to_string(r) + " would take " + std::to_string(int64_t(samples)) +
                     " samples, more than " + std::to_string(int64_t(most)) + " for this image");
            regions[size_t(r)] = {x0, y0, w / double(outW), h / double(outH), int64_t(gridH), int64_t(gridW)};
        }
        at::Tensor y = at::empty({R, C, outH, outW}, type);
        AT_DISPATCH_FLOATING_TYPES(type, "RoiAlign", [&] {
            const scalar_t* xp = X.data_ptr<scalar_t>();
            const int64_t* bp = batch.data_ptr<int64_t>();
            scalar_t* yp = y.data_ptr<scalar_t>();
            at::parallel_for(0, R, 1, [&](int64_t begin, int64_t end) {
                std::vector<double> acc(static_cast<size_t>(C));
                for (int64_t r = begin; r < end; ++r) {
                    const Region& g = regions[size_t(r)];
                    const auto rows = roiAxisSamples(g.y0, g.binH, outH, g.gridH, H);
                    const auto cols = roiAxisSamples(g.x0, g.binW, outW, g.gridW, W);
                    const scalar_t* image = xp + bp[r] * H * W * C;
                    const double count = double(std::max<int64_t>(g.gridH * g.gridW, 1));
                    for (int64_t ph = 0; ph < outH; ++ph)
                        for (int64_t pw = 0; pw < outW; ++pw) {
                            std::fill(acc.begin(), acc.end(), 0.0);
                            bool first = true;
                            for (int64_t iy = 0; iy < g.gridH; ++iy)
                                for (int64_t ix = 0; ix < g.gridW; ++ix) {
                                    const RoiAxisSample& sy = rows[size_t(ph * g.gridH + iy)];
                                    const RoiAxisSample& sx = cols[size_t(pw * g.gridW + ix)];
                                    if (!sy.inside || !sx.inside) {  // a sample off the image counts 0
                                        if (max)
                                            for (int64_t ch = 0; ch < C; ++ch)
                                                acc[size_t(ch)] = first ? 0.0 : std::max(acc[size_t(ch)], 0.0);
                                        first = false;
                                        continue;
                                    }
                                    const double w0 = sy.lowWeight * sx.lowWeight, w1 = sy.lowWeight * sx.highWeight;
                                    const double w2 = sy.highWeight * sx.lowWeight, w3 = sy.highWeight * sx.highWeight;
                                    const scalar_t* p0 = image + (sy.low * W + sx.low) * C;
                                    const scalar_t* p1 = image + (sy.low * W + sx.high) * C;
                                    const scalar_t* p2 = image + (sy.high * W + sx.low) * C;
                                    const scalar_t* p3 = image + (sy.high * W + sx.high) * C;
                                    double* a = acc.data();
                                    if (!max) {
                                        roiSampleAdd(a, C, p0, p1, p2, p3, w0, w1, w2, w3);
                                    } else {
                                        for (int64_t ch = 0; ch < C; ++ch) {
                                            const double m = std::max(std::max(w0 * double(p0[ch]), w1 * double(p1[ch])),
                                                                      std::max(w2 * double(p2[ch]), w3 * double(p3[ch])));
                                            a[ch] = first ? m : std::max(a[ch], m);
                                        }
                                    }
                                    first = false;
                                }
                            scalar_t* o = yp + (r * C * outH + ph) * outW + pw;
                            for (int64_t ch = 0; ch < C; ++ch)
                                o[ch * outH * outW] = scalar_t(max ? acc[size_t(ch)] : acc[size_t(ch)] / count);
                        }
                }
            });
        });
        out[0] = y.to(x.scalar_type());
    };
}

struct NmsBox {
    double y1, x1, y2, x2;
};

// Whether a box among the 16-box blocks [begin, end) of the columns, flagged by `kept` (1 or
// 0), overlaps `a` (of area `area`) by an IoU above `threshold`: intersection over union, 0
// where they do not meet or the union is not positive. Blocks of a fixed 16 vectorize.
RAMIEL_CLONES bool anyOverlapAbove(const double* y1, const double* x1, const double* y2, const double* x2,
                                   const double* areas, const double* kept, size_t begin, size_t end, NmsBox a,
                                   double area, double threshold)
{
    const int64_t apart = 0.0 > threshold;  // what a pair that does not meet gives
    for (size_t block = begin; block < end; block += 16) {
        int64_t hit = 0;
        for (size_t p = block; p < block + 16; ++p) {
            const double ih = std::min(a.y2, y2[p]) - std::max(a.y1, y1[p]);
            const double iw = std::min(a.x2, x2[p]) - std::max(a.x1, x1[p]);
            const double inter = ih * iw;
            const double uni = area + areas[p] - inter;
            const int64_t meet = (ih > 0) & (iw > 0) & (uni > 0);
            hit |= (kept[p] > 0) & ((meet & (inter / uni > threshold)) | ((meet ^ 1) & apart));
        }
        if (hit)  // the first overlap ends the scan
            return true;
    }
    return false;
}

// The first index of the sorted `values` whose value is at least `v`, searched outwards from
// `from` (galloping: a box's neighbours lie near it in the layout).
size_t firstAtLeast(const std::vector<double>& values, size_t from, double v)
{
    const size_t n = values.size();
    size_t lo = 0, hi = n;  // the answer lies in [lo, hi]
    if (from >= n) {
    } else if (values[from] >= v) {  // at or before `from`
        hi = from;
        for (size_t step = 1;; step *= 2) {
            if (hi < step)
                break;
            if (values[hi - step] < v) {
                lo = hi - step + 1;
                break;
            }
            hi -= step;
        }
    } else {  // after it
        lo = from + 1;
        for (size_t step = 1;; step *= 2) {
            const size_t probe = lo + step - 1;
            if (probe >= n)
                break;
            if (values[probe] >= v) {
                hi = probe;
                break;
            }
            lo = probe + 1;
        }
    }
    return size_t(std::lower_bound(values.begin() + std::ptrdiff_t(lo), values.begin() + std::ptrdiff_t(hi), v) -
                  values.begin());
}

// Boxes as columns (padded to whole blocks of 16 that flag nothing), and which are kept.
class KeptBoxes {
public:
    explicit KeptBoxes(size_t n)
        : y1_(padded(n)), x1_(padded(n)), y2_(padded(n)), x2_(padded(n)), area_(padded(n)), kept_(padded(n))
    {
    }
    void set(size_t p, const NmsBox& b)
    {
        y1_[p] = b.y1, x1_[p] = b.x1, y2_[p] = b.y2, x2_[p] = b.x2;
        area_[p] = (b.y2 - b.y1) * (b.x2 - b.x1);
    }
    NmsBox get(size_t p) const { return {y1_[p], x1_[p], y2_[p], x2_[p]}; }
    void keep(size_t p) { kept_[p] = 1; }
    // Whether a kept box among [lo, hi) (widened to whole blocks: any kept box that overlaps
    // suppresses, wherever it lies) overlaps `a` by an IoU above `threshold`.
    bool anyOverlapAbove(const NmsBox& a, size_t lo, size_t hi, double threshold) const
    {
        if (lo >= hi)
            return false;
        return ramiel::anyOverlapAbove(y1_.data(), x1_.data(), y2_.data(), x2_.data(), area_.data(), kept_.data(),
                                       lo / 16 * 16, padded(hi), a, (a.y2 - a.y1) * (a.x2 - a.x1), threshold);
    }

private:
    static size_t padded(size_t n) { return (n + 15) / 16 * 16; }
    std::vector<double> y1_, x1_, y2_, x2_, area_, kept_;
};

// NonMaxSuppression: per batch and class, boxes by falling score, each kept unless it
// overlaps a kept one by more than the IoU threshold; [batch, class, box] rows.
Kernel nonMaxSuppressionKernel(const KernelContext& c)
{
    const bool center = c.node.attrInt("center_point_box", 0) != 0;
    return [center](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor boxes = in[0].to(at::kDouble).contiguous(), scores = in[1].to(at::kDouble).contiguous();
        if (boxes.dim() != 3 || boxes.size(2) != 4 || scores.dim() != 3 || scores.size(0) != boxes.size(0) ||
            scores.size(2) != boxes.size(1))
            fail("NonMaxSuppression: boxes " + shapeText(boxes.sizes()) + " and scores " + shapeText(scores.sizes()) +
                 " must be B x N x 4 and B x C x N");
        auto scalar = [&](size_t i, double fallback) {
            return in.size() > i && in[i].defined() && in[i].numel() > 0 ? in[i].to(at::kDouble).reshape({-1})[0].item<double>()
                                                                          : fallback;
        };
        // Read as an integer: torchvision exports INT64_MAX, which as a double is past int64's range.
        const int64_t limit = in.size() > 2 && in[2].defined() && in[2].numel() > 0
                                  ? in[2].to(at::kLong).reshape({-1})[0].item<int64_t>()
                                  : 0;
        const double iouMax = scalar(3, 0), minScore = scalar(4, -std::numeric_limits<double>::infinity());
        const bool scoreGiven = in.size() > 4 && in[4].defined() && in[4].numel() > 0;
        const int64_t B = boxes.size(0), N = boxes.size(1), C = scores.size(1);
        const double* bx = boxes.data_ptr<double>();
        const double* sc = scores.data_ptr<double>();
        auto box = [&](int64_t b, int64_t i) {
            const double* p = bx + (b * N + i) * 4;
            if (center)
                return NmsBox{p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
            return NmsBox{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
        };
        std::vector<int64_t> rows;
        for (int64_t b = 0; b < B && limit > 0; ++b)
            for (int64_t k = 0; k < C; ++k) {
                const double* s = sc + (b * C + k) * N;
                std::vector<int64_t> order;
                for (int64_t i = 0; i < N; ++i)
                    if (!scoreGiven || s[i] > minScore)
                        order.push_back(i);
                std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
                // The candidates laid out once by their top edge, with a flag for those kept: a
                // candidate is compared only with the kept ones whose rows it can meet (top above
                // its bottom, and within the tallest kept box's height, widened by rounding's
                // margin, above its top), a contiguous stretch of that layout; no other can
                // overlap it. Batched suppression offsets each class's boxes apart (torchvision's
                // export), so the stretch holds about one class's boxes. Coordinates that are not
                // finite, and a negative threshold (which a box apart exceeds), compare with every kept box.
                KeptBoxes byTop(order.size());
                std::vector<double> tops(order.size());  // byTop's top edges, NaN first
                std::vector<size_t> place(order.size());  // where order[r] lies in byTop
                {
                    std::vector<double> top(order.size());
                    std::vector<size_t> rank(order.size());
                    for (size_t r = 0; r < order.size(); ++r) {
                        const double y1 = box(b, order[r]).y1;
                        top[r] = std::isnan(y1) ? -std::numeric_limits<double>::infinity() : y1;
                        rank[r] = r;
                    }
                    std::stable_sort(rank.begin(), rank.end(), [&](size_t p, size_t q) { return top[p] < top[q]; });
                    for (size_t at = 0; at < rank.size(); ++at) {
                        place[rank[at]] = at;
                        byTop.set(at, box(b, order[rank[at]]));
                        tops[at] = top[rank[at]];
                    }
                }
                int64_t keptCount = 0;
                bool anyUnbounded = false;  // a kept box that is not finite: every candidate compares with it
                double tallest = 0;
                for (size_t r = 0; r < order.size() && keptCount < limit; ++r) {
                    const NmsBox bi = byTop.get(place[r]);
                    const bool finite = std::isfinite(bi.y1) && std::isfinite(bi.y2) && std::isfinite(bi.x1) && std::isfinite(bi.x2);
                    size_t lo = 0, hi = order.size();
                    if (finite && !anyUnbounded && iouMax >= 0) {
                        lo = firstAtLeast(tops, place[r], bi.y1 - tallest - (std::abs(bi.y1) + tallest) * 1e-12);
                        hi = firstAtLeast(tops, place[r], bi.y2);
                    }
                    if (byTop.anyOverlapAbove(bi, lo, hi, iouMax))
                        continue;
                    byTop.keep(place[r]);
                    ++keptCount;
                    if (finite)
                        tallest = std::max(tallest, bi.y2 - bi.y1);
                    else
                        anyUnbounded = true;
                    rows.insert(rows.end(), {b, k, order[r]});
                }
            }
        out[0] = at::tensor(rows, at::kLong).reshape({int64_t(rows.size() / 3), 3});
    };
}

}  // namespace

void registerIndexingKernels(KernelRegistry& r)
{
    r["ScatterND"] = scatterNDKernel;
    r["ScatterElements"] = scatterElementsKernel;
    r["Scatter"] = scatterElementsKernel;
    r["GatherElements"] = gatherElementsKernel;
    r["GatherND"] = gatherNDKernel;
    r["NonZero"] = nonZeroKernel;
    r["Unique"] = uniqueKernel;
    r["OneHot"] = oneHotKernel;
    r["CumSum"] = cumSumKernel;
    r["Trilu"] = triluKernel;
    r["EyeLike"] = eyeLikeKernel;
    r["Compress"] = compressKernel;
    r["ReverseSequence"] = reverseSequenceKernel;
    r["DepthToSpace"] = depthSpace(true);
    r["SpaceToDepth"] = depthSpace(false);
    r["Einsum"] = einsumKernel;
    r["MaxUnpool"] = maxUnpoolKernel;
    r["GridSample"] = gridSampleKernel;
    r["RoiAlign"] = roiAlignKernel;
    r["NonMaxSuppression"] = nonMaxSuppressionKernel;
}

}  // namespace ramiel
