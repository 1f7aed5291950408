// Data movement and shape operators, reductions, and constants. Where an
// operator's signature changed between opsets (attributes became inputs), the
// kernel follows the node's opset.
#include "core/runtime/torch/aten_tensor.h"
#include "core/runtime/torch/kernel.h"

#include "core/ir/dropout.h"
#include "core/ir/fused_ops.h"
#include "core/ir/pad_axes.h"
#include "core/ir/slice_range.h"
#include "core/ir/split_parts.h"
#include "core/runtime/torch/channels_last.h"
#include "core/util/error.h"
#include "core/util/resources.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <type_traits>

namespace ramiel {

namespace {

// x's data as a contiguous tensor of `sizes` (the same number of elements),
// sharing x's storage, without ATen's dispatcher where x is contiguous: Flatten
// before a classifier is the first ATen call after the convolutions, and its
// cold dispatch took 15-36 us there (x.reshape; docs/runtime.md).
at::Tensor contiguousView(const at::Tensor& x, c10::IntArrayRef sizes)
{
    if (!x.is_contiguous() || x.layout() != at::kStrided || !x.has_storage())
        return x.reshape(sizes);
    if (c10::multiply_integers(sizes) != x.numel())  // a caller's wrong sizes would read past the storage
        throw std::runtime_error("a view of sizes " + c10::str(sizes) + " on a tensor of " + std::to_string(x.numel()) +
                                 " elements");
    auto view = c10::make_intrusive<c10::TensorImpl>(c10::Storage(x.storage()), x.key_set(), x.dtype());
    view->set_storage_offset(x.storage_offset());
    view->set_sizes_contiguous(sizes);
    return at::Tensor(std::move(view));
}

Kernel passThrough()
{
    return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        out[0] = in[0];
    };
}

// Dropout: a copy of the input and an all-kept mask, as inference runs it,
// unless in training mode (is_test = 0 before opset 7; the training_mode input
// since opset 12) with a ratio above 0: then each element is kept with
// probability 1 - ratio and scaled by 1 / (1 - ratio), the mask saying which,
// drawn from a generator seeded by the `seed` attribute where there is one
// (PyTorch's, so not the numbers NumPy or ONNX Runtime would draw).
Kernel dropout(const KernelContext& c)
{
    const Node& n = c.node;
    // What the attributes and absent inputs settle; training_mode and ratio given as
    // inputs are read each run.
    const DropoutMode known = dropoutMode(n, [](size_t) -> const Tensor* { return nullptr; });
    std::optional<at::Generator> seeded;
    if (n.attr("seed"))
        seeded = at::make_generator<at::CPUGeneratorImpl>(uint64_t(n.attrInt("seed", 0)));
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const bool training = known.training ? *known.training : in[2].numel() == 1 && in[2].item<bool>();
        const double ratio = known.ratio ? *known.ratio : in[1].item<double>();
        if (!training || ratio == 0.0) {
            out[0] = in[0];
            for (size_t i = 1; i < out.size(); ++i)
                out[i] = at::ones(in[0].sizes(), at::kBool);
            return;
        }
        if (!(ratio > 0.0 && ratio < 1.0))
            throw Error(ErrorKind::Runtime, {}, "Dropout ratio " + std::to_string(ratio) + " is outside [0, 1)");
        at::Tensor keep = at::empty(in[0].sizes(), in[0].options().dtype(at::kFloat));
        keep.bernoulli_(1.0 - ratio, seeded ? *seeded : c10::optional<at::Generator>());
        const at::Tensor mask = keep.to(at::kBool);
        out[0] = in[0] * keep.mul_(1.0 / (1.0 - ratio)).to(in[0].scalar_type());
        for (size_t i = 1; i < out.size(); ++i)
            out[i] = mask;
    };
}

// A reduction: axes from the attribute (or input since `inputSinceOpset`), keepdims.
template <typename F>
KernelFactory reduction(F f, int64_t inputSinceOpset)
{
    return [f, inputSinceOpset](const KernelContext& c) -> Kernel {
        const bool keep = c.node.attrInt("keepdims", 1) != 0;
        const bool noopWhenEmpty = c.node.attrInt("noop_with_empty_axes", 0) != 0;
        const int64_t opset = c.opset();
        const auto attrAxes = c.node.attrInts("axes");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<int64_t> axes = opset < inputSinceOpset ? attrAxes
                                                                : (in.size() > 1 ? intsOf(in[1]) : std::vector<int64_t>{});
            const at::Tensor& x = in[0];
            if (axes.empty()) {
                if (noopWhenEmpty && opset >= inputSinceOpset) {
                    out[0] = x;
                    return;
                }
                for (int64_t i = 0; i < x.dim(); ++i)
                    axes.push_back(i);
            }
            for (size_t i = 0; i < axes.size(); ++i) {
                axes[i] = normalizeAxis(axes[i], x.dim());
                if (std::find(axes.begin(), axes.begin() + i, axes[i]) != axes.begin() + i) {
                    const auto given = opset < inputSinceOpset ? attrAxes : intsOf(in[1]);  // as written
                    throw Error(ErrorKind::Runtime, {}, "axes " + shapeText(given) + " name axis " + std::to_string(axes[i]) + " twice");
                }
            }
            out[0] = f(x, axes, keep);
        };
    };
}

// Range of integers, exactly: the count from 128-bit arithmetic (limit - start overflows an
// int64 at the extremes), the values by wrapping addition (each fits; the running product
// i * delta may not). Doubles lose integers past 2^53.
at::Tensor integerRange(int64_t start, int64_t limit, int64_t delta)
{
    if (delta == 0)
        throw Error(ErrorKind::Runtime, {}, "the step is 0");
    const __int128 diff = __int128(limit) - start;
    __int128 count = diff / delta;
    if (diff % delta != 0 && (diff > 0) == (delta > 0))
        ++count;
    if (count > __int128(1000000000000000))
        throw Error(ErrorKind::Runtime, {}, "start, limit and step give more than 10^15 elements");
    const int64_t n = count > 0 ? int64_t(count) : 0;
    at::Tensor y = at::empty({n}, at::kLong);
    int64_t* p = y.data_ptr<int64_t>();
    uint64_t v = uint64_t(start);
    for (int64_t i = 0; i < n; ++i, v += uint64_t(delta))
        p[i] = int64_t(v);
    return y;
}

// Source coordinate of output coordinate `o` along an axis resized by `scale`;
// `outLength` is in·scale (not rounded) when scales were given, as in ONNX.
double sourceCoordinate(const std::string& mode, double o, double scale, int64_t inSize, double outLength)
{
    if (mode == "asymmetric")
        return o / scale;
    if (mode == "align_corners")
        return outLength == 1 ? 0.0 : o * double(inSize - 1) / (outLength - 1);
    if (mode == "pytorch_half_pixel")
        return outLength > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    if (mode == "tf_half_pixel_for_nn")
        return (o + 0.5) / scale;
    return (o + 0.5) / scale - 0.5;  // half_pixel
}

int64_t nearestIndex(const std::string& mode, double x)
{
    if (mode == "floor")
        return int64_t(std::floor(x));
    if (mode == "ceil")
        return int64_t(std::ceil(x));
    const double fl = std::floor(x);
    if (x - fl == 0.5)
        return mode == "round_prefer_ceil" ? int64_t(fl) + 1 : int64_t(fl);
    return int64_t(std::round(x));
}


// Pad's 'reflect' and 'edge' modes (`p`: the pads in ATen's order). ATen pads the
// trailing 1-3 dimensions of a batched floating tensor (integers go through double, exactly).
at::Tensor padReflectOrEdge(const at::Tensor& x, const std::vector<int64_t>& pads, const std::vector<int64_t>& p,
                            const std::string& mode)
{
    const int64_t rank = x.dim();
    const bool integral = !at::isFloatingType(x.scalar_type());
    int64_t used = 0;
    for (int64_t i = 0; i < rank; ++i)
        if (pads[size_t(i)] || pads[size_t(i + rank)])
            used = std::max(used, rank - i);
    const int64_t lead = rank - std::max<int64_t>(used, 1);
    std::vector<int64_t> q(p.begin(), p.begin() + 2 * (rank - lead));
    at::Tensor y = x.reshape([&] {
        std::vector<int64_t> s{-1};
        s.insert(s.end(), x.sizes().begin() + lead, x.sizes().end());
        return s;
    }()).unsqueeze(0);
    if (integral)
        y = y.to(at::kDouble);
    const size_t d = q.size() / 2;
    if (d > 3)
        throw Error(ErrorKind::Unsupported, {}, "Pad '" + mode + "' over more than 3 dimensions");
    if (mode == "reflect")
        y = d == 1 ? at::reflection_pad1d(y, q) : d == 2 ? at::reflection_pad2d(y, q) : at::reflection_pad3d(y, q);
    else
        y = d == 1 ? at::replication_pad1d(y, q) : d == 2 ? at::replication_pad2d(y, q) : at::replication_pad3d(y, q);
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + lead);
    shape.insert(shape.end(), y.sizes().begin() + 2, y.sizes().end());
    return integral ? y.reshape(shape).to(x.scalar_type()) : y.reshape(shape);
}

Kernel padKernel(const KernelContext& c)
{
    const int64_t opset = c.opset();
    const std::string mode = c.node.attrString("mode", "constant");
    const auto padsAttr = c.node.attrInts(opset < 2 ? "paddings" : "pads");
    const double valueAttr = c.node.attrFloat("value", 0.0f);
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        c.unsupported("pad mode '" + mode + "' is not supported");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        const at::Tensor& x = in[0];
        std::vector<int64_t> pads = opset < 11 ? padsAttr : intsOf(in[1]);
        const int64_t rank = x.dim();
        if (opset >= 18 && in.size() > 3 && in[3].defined()) {  // pads of the axes input 3 names
            std::string problem;
            const auto every = padsOfEveryAxis(pads, intsOf(in[3]), rank, problem);
            if (!every)
                throw Error(ErrorKind::Runtime, {}, problem);
            pads = *every;
        }
        if (int64_t(pads.size()) != 2 * rank)
            throw Error(ErrorKind::Runtime, {}, "pads has " + std::to_string(pads.size()) + " values, the input's rank " +
                                                    std::to_string(rank) + " needs " + std::to_string(2 * rank));
        std::vector<int64_t> padded(size_t(rank), 0);
        for (int64_t i = 0; i < rank; ++i) {
            const int64_t n = x.size(i), before = pads[size_t(i)], after = pads[size_t(i + rank)];
            int64_t& size = padded[size_t(i)];
            if (__builtin_add_overflow(n, before, &size) || __builtin_add_overflow(size, after, &size))
                throw Error(ErrorKind::Runtime, {}, "pads " + shapeText(pads) + " make axis " + std::to_string(i) +
                                                        " longer than a size can count");
            if (size < 0)
                throw Error(ErrorKind::Runtime, {}, "pads " + shapeText(pads) + " remove more than the " +
                                                        std::to_string(n) + " values of axis " + std::to_string(i));
            // What ONNX Runtime refuses too: no element to repeat, or a reflection past the far end.
            if (mode == "edge" && n == 0 && (before > 0 || after > 0))
                throw Error(ErrorKind::Runtime, {}, "Pad 'edge' pads axis " + std::to_string(i) +
                                                        ", which is empty: there is no edge value to repeat");
            if (mode == "reflect" && std::max(before, after) > std::max<int64_t>(n - 1, 0))
                throw Error(ErrorKind::Runtime, {}, "Pad 'reflect' pads axis " + std::to_string(i) + " of " +
                                                        std::to_string(n) + " values by " + std::to_string(std::max(before, after)) +
                                                        "; a reflection reaches at most " + std::to_string(std::max<int64_t>(n - 1, 0)));
        }
        std::vector<int64_t> p;  // ATen order: last dimension first
        for (int64_t i = rank; i-- > 0;) {
            p.push_back(pads[size_t(i)]);
            p.push_back(pads[size_t(i + rank)]);
        }
        if (mode == "constant") {
            const double value = opset < 11 ? valueAttr
                                            : (in.size() > 2 && in[2].defined() && in[2].numel() > 0 ? in[2].item<double>() : 0.0);
            // Of an empty input every element is padding (ATen 1.13's constant_pad_nd refuses
            // an empty axis: a detector's masks when no box is left).
            out[0] = x.numel() == 0 ? at::full(padded, value, x.options()) : at::constant_pad_nd(x, p, value);
            return;
        }
        if (x.numel() == 0) {  // an empty axis that is not padded: nothing to reflect or repeat
            out[0] = at::empty(padded, x.options());
            return;
        }
        out[0] = padReflectOrEdge(x, pads, p, mode);
    };
}

// An axis of inSize elements resized by `scale` (Resize's scales, Upsample's): its
// floor(inSize * scale) elements; a scale that is not positive and finite, or an axis
// longer than an int64 counts, is refused (converting such a double is undefined).
int64_t scaledSize(int64_t inSize, double scale, int64_t axis)
{
    if (!(scale > 0) || !std::isfinite(scale))  // also NaN
        throw Error(ErrorKind::Runtime, {}, "scale " + std::to_string(scale) + " of axis " + std::to_string(axis) +
                                                " must be positive and finite");
    const double size = std::floor(double(inSize) * scale);
    if (!(size < 9.0e18))
        throw Error(ErrorKind::Runtime, {}, "scale " + std::to_string(scale) + " makes axis " + std::to_string(axis) +
                                                " of " + std::to_string(inSize) + " elements longer than a size can count");
    return int64_t(size);
}

// Resizing `input` to `sizes` one axis at a time makes a tensor of each stage's shape (the
// first k axes resized): one that the machine has no memory for is refused in one line
// that names it (checked past 256 MiB only: the free memory is a file read). Returns
// whether the output is empty; then no stage runs (an early axis may grow before a
// later one becomes 0).
bool resizedIsEmpty(at::IntArrayRef input, const std::vector<int64_t>& sizes, int64_t elementBytes)
{
    if (std::count(sizes.begin(), sizes.end(), 0))
        return true;
    std::vector<int64_t> stage(input.begin(), input.end());
    for (size_t k = 0; k < sizes.size(); ++k) {
        stage[k] = sizes[k];
        const std::optional<int64_t> elements = Shape::of(stage).numel();  // none where it overflows
        const uint64_t bytes = elements ? byteCount(*elements, elementBytes) : UINT64_MAX;
        if (bytes > (uint64_t(1) << 28))
            requireMemory({}, "resizing to " + shapeText(sizes) + ", the stage " + shapeText(stage), bytes);
    }
    return false;
}

// One axis of a Resize: output coordinate o reads the input at source(o). With
// tf_crop_and_resize (`crop`: roi's start and end on this axis, fractions of its last
// index) the output spans that part of the axis, and an output whose source falls
// outside the input is extrapolated.
struct ResizeAxis {
    int64_t axis, inSize, outSize;
    double scale, outLength;
    const std::string& coord;
    std::optional<std::pair<double, double>> crop;

    double source(int64_t o) const
    {
        if (!crop)
            return sourceCoordinate(coord, double(o), scale, inSize, outLength);
        const auto [start, end] = *crop;
        const double last = double(inSize - 1);
        const double x = outSize > 1 ? start * last + double(o) * (end - start) * last / double(outSize - 1)
                                     : 0.5 * (start + end) * last;
        // Beyond two of the input's ends only the side matters (the output is extrapolated),
        // and a far coordinate would overflow the taps' int64.
        return std::clamp(x, -2.0, last + 2.0);
    }
    // The outputs whose source lies outside [0, inSize - 1].
    std::vector<int64_t> outside() const
    {
        std::vector<int64_t> r;
        for (int64_t o = 0; crop && o < outSize; ++o) {
            const double x = source(o);
            if (x < 0 || x > double(inSize - 1))
                r.push_back(o);
        }
        return r;
    }
};

at::Tensor resizeNearest(const at::Tensor& y, const ResizeAxis& ax, const std::string& nearest)
{
    const int64_t inSize = ax.inSize, outSize = ax.outSize;
    std::vector<int64_t> idx(static_cast<size_t>(outSize));
    for (int64_t o = 0; o < outSize; ++o) {
        const double x = ax.source(o);
        idx[size_t(o)] = std::clamp<int64_t>(nearestIndex(nearest, x), 0, inSize - 1);
    }
    return y.index_select(ax.axis, at::tensor(idx, at::kLong));
}

// Four taps around floor(x), Keys' kernel with coefficient A; edge values outside.
at::Tensor resizeCubic(const at::Tensor& y, const ResizeAxis& ax, double cubicA, bool excludeOutside)
{
    const int64_t axis = ax.axis, inSize = ax.inSize, outSize = ax.outSize;
    auto weight = [cubicA](double d) {
        d = std::abs(d);
        if (d <= 1)
            return ((cubicA + 2) * d - (cubicA + 3)) * d * d + 1;
        if (d < 2)
            return ((cubicA * d - 5 * cubicA) * d + 8 * cubicA) * d - 4 * cubicA;
        return 0.0;
    };
    std::vector<std::vector<int64_t>> taps(4, std::vector<int64_t>(static_cast<size_t>(outSize)));
    std::vector<std::vector<float>> weights(4, std::vector<float>(static_cast<size_t>(outSize)));
    for (int64_t o = 0; o < outSize; ++o) {
        const double x = ax.source(o);
        const double x0 = std::floor(x);
        double w[4], sum = 0;
        for (int k = 0; k < 4; ++k) {
            const int64_t at = int64_t(x0) + k - 1;
            w[k] = weight(x - double(at));
            if (excludeOutside && (at < 0 || at >= inSize))
                w[k] = 0;
            sum += w[k];
            taps[size_t(k)][size_t(o)] = std::clamp<int64_t>(at, 0, inSize - 1);
        }
        for (int k = 0; k < 4; ++k)
            weights[size_t(k)][size_t(o)] = float(excludeOutside && sum != 0 ? w[k] / sum : w[k]);
    }
    std::vector<int64_t> wshape(size_t(y.dim()), 1);
    wshape[size_t(axis)] = outSize;
    const at::Tensor src = y.to(at::kDouble);
    at::Tensor acc;
    for (int k = 0; k < 4; ++k) {
        const at::Tensor part = src.index_select(axis, at::tensor(taps[size_t(k)], at::kLong)) *
                                at::tensor(weights[size_t(k)], at::kFloat).to(at::kDouble).reshape(wshape);
        acc = k == 0 ? part : acc + part;
    }
    return acc.to(y.scalar_type());
}

at::Tensor resizeLinear(const at::Tensor& y, const ResizeAxis& ax)
{
    const int64_t axis = ax.axis, inSize = ax.inSize, outSize = ax.outSize;
    std::vector<int64_t> i0(static_cast<size_t>(outSize)), i1(static_cast<size_t>(outSize));
    std::vector<float> w(static_cast<size_t>(outSize));
    for (int64_t o = 0; o < outSize; ++o) {
        double x = ax.source(o);
        x = std::clamp(x, 0.0, double(inSize - 1));
        const int64_t lo = int64_t(std::floor(x));
        i0[size_t(o)] = lo;
        i1[size_t(o)] = std::min(lo + 1, inSize - 1);
        w[size_t(o)] = float(x - double(lo));
    }
    std::vector<int64_t> wshape(size_t(y.dim()), 1);
    wshape[size_t(axis)] = outSize;
    const at::Tensor wt = at::tensor(w, at::kFloat).reshape(wshape).to(y.scalar_type());
    const at::Tensor a = y.index_select(axis, at::tensor(i0, at::kLong));
    const at::Tensor b = y.index_select(axis, at::tensor(i1, at::kLong));
    return a + (b - a) * wt;
}

Kernel resizeKernel(const KernelContext& c)
{
    const int64_t opset = c.opset();
    const std::string mode = c.node.attrString("mode", "nearest");
    const std::string coord = opset < 11 ? "asymmetric" : c.node.attrString("coordinate_transformation_mode", "half_pixel");
    const std::string nearest = c.node.attrString("nearest_mode", "round_prefer_floor");
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
        c.unsupported("Resize mode '" + mode + "' is not supported");
    const double cubicA = c.node.attrFloat("cubic_coeff_a", -0.75f);
    const bool excludeOutside = c.node.attrInt("exclude_outside", 0) != 0;
    const bool cropped = coord == "tf_crop_and_resize";
    const double extrapolation = c.node.attrFloat("extrapolation_value", 0.0f);
    if (c.node.attr("antialias") && c.node.attrInt("antialias", 0))
        c.unsupported("antialias is not supported");
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        at::Tensor y = in[0];
        const int64_t rank = y.dim();
        // Inputs: opset 10: X, scales; from 11: X, roi, scales, sizes.
        const at::Tensor scalesT = opset < 11 ? in[1] : (in.size() > 2 ? in[2] : at::Tensor());
        const at::Tensor sizesT = opset >= 11 && in.size() > 3 ? in[3] : at::Tensor();
        std::vector<double> scales(size_t(rank), 1.0);
        std::vector<int64_t> sizes(y.sizes().begin(), y.sizes().end());
        const bool sizesGiven = sizesT.defined() && sizesT.numel() > 0;
        if (sizesGiven) {
            sizes = intsOf(sizesT);
            if (int64_t(sizes.size()) != rank)
                throw Error(ErrorKind::Runtime, {}, "sizes has " + std::to_string(sizes.size()) +
                                                        " values for an input of rank " + std::to_string(rank));
            for (int64_t i = 0; i < rank; ++i) {
                if (sizes[size_t(i)] < 0)
                    throw Error(ErrorKind::Runtime, {}, "sizes " + shapeText(sizes) + " has a negative size");
                scales[size_t(i)] = double(sizes[size_t(i)]) / double(y.size(i));
            }
        } else if (scalesT.defined() && scalesT.numel() > 0) {
            if (scalesT.numel() != rank)
                throw Error(ErrorKind::Runtime, {}, "scales has " + std::to_string(scalesT.numel()) +
                                                        " values for an input of rank " + std::to_string(rank));
            const at::Tensor s = scalesT.to(at::kDouble).contiguous();
            for (int64_t i = 0; i < rank; ++i) {
                scales[size_t(i)] = s.data_ptr<double>()[i];
                sizes[size_t(i)] = scaledSize(y.size(i), scales[size_t(i)], i);
            }
        }
        if (resizedIsEmpty(y.sizes(), sizes, y.element_size())) {
            out[0] = at::empty(sizes, y.options());
            return;
        }
        // tf_crop_and_resize's region: roi's starts, then its ends, one each an axis (the
        // whole axis, 0 to 1, without a roi).
        std::vector<double> roi;
        if (cropped && in.size() > 1 && in[1].defined() && in[1].numel() > 0) {
            if (in[1].numel() != 2 * rank)
                throw Error(ErrorKind::Runtime, {}, "roi has " + std::to_string(in[1].numel()) + " values for an input of rank " +
                                                        std::to_string(rank) + "; tf_crop_and_resize takes " +
                                                        std::to_string(2 * rank));
            const at::Tensor r = in[1].to(at::kDouble).contiguous();
            roi.assign(r.data_ptr<double>(), r.data_ptr<double>() + 2 * rank);
            for (double v : roi)
                if (!std::isfinite(v))
                    throw Error(ErrorKind::Runtime, {}, "roi holds " + std::to_string(v) + "; its values must be finite");
        }
        // Bilinear over the last two axes of a float image, in a coordinate mode ATen's
        // kernel shares (half_pixel, and pytorch_half_pixel where no output axis has one
        // element, its exception; align_corners): ATen's upsample_bilinear2d, one pass that
        // keeps a channels-last input so (the axis-by-axis path below took 3.2 ms for
        // DeepLabV3's 21 x 28x28 -> 224x224 logits on one thread and on two; this, 0.7).
        if (mode == "linear" && !cropped && rank == 4 && y.scalar_type() == at::kFloat && sizes[0] == y.size(0) &&
            sizes[1] == y.size(1) && scales[0] == 1.0 && scales[1] == 1.0 && sizes[2] > 1 && sizes[3] > 1 &&
            (coord == "half_pixel" || coord == "pytorch_half_pixel" || coord == "align_corners")) {
            const bool corners = coord == "align_corners";
            auto scale = [&](size_t i) { return sizesGiven || corners ? c10::optional<double>() : scales[i]; };
            out[0] = at::upsample_bilinear2d(y, {sizes[2], sizes[3]}, corners, scale(2), scale(3));
            return;
        }
        // Separable: resize one axis at a time with ONNX's coordinate rules. Outputs to be
        // extrapolated are set last, so no axis interpolates between extrapolated values.
        std::vector<std::pair<int64_t, std::vector<int64_t>>> extrapolated;
        for (int64_t axis = 0; axis < rank; ++axis) {
            const int64_t inSize = y.size(axis), outSize = sizes[size_t(axis)];
            const std::pair<double, double> region =
                roi.empty() ? std::pair(0.0, 1.0) : std::pair(roi[size_t(axis)], roi[size_t(axis + rank)]);
            if (inSize == outSize && scales[size_t(axis)] == 1.0 && region == std::pair(0.0, 1.0))
                continue;
            const double scale = scales[size_t(axis)];
            const double outLength = sizesGiven ? double(outSize) : double(inSize) * scale;
            const ResizeAxis ax{axis, inSize, outSize, scale, outLength, coord,
                                cropped ? std::optional(region) : std::nullopt};
            if (mode == "nearest")
                y = resizeNearest(y, ax, nearest);
            else if (mode == "cubic")
                y = resizeCubic(y, ax, cubicA, excludeOutside);
            else
                y = resizeLinear(y, ax);
            if (std::vector<int64_t> outside = ax.outside(); !outside.empty())
                extrapolated.emplace_back(axis, std::move(outside));
        }
        for (const auto& [axis, outputs] : extrapolated)
            y.index_fill_(axis, at::tensor(outputs, at::kLong), extrapolation);
        out[0] = y.contiguous();
    };
}

// ArgMax (`max`) or ArgMin.
KernelFactory argReduce(bool max)
{
    return [max](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", 0);
        const bool keep = c.node.attrInt("keepdims", 1) != 0;
        const bool last = c.node.attrInt("select_last_index", 0) != 0;
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            // Ties: the first index unless select_last_index (search the flipped axis).
            const at::Tensor src = last ? x.flip(axis) : x;
            at::Tensor i = max ? src.argmax(axis, keep) : src.argmin(axis, keep);
            if (last)
                i = (x.size(axis) - 1) - i;
            out[0] = i;
        };
    };
}

// Identity, Dropout, constants, Shape and Range.
void registerConstantKernels(KernelRegistry& r)
{
    r["Identity"] = [](const KernelContext&) { return passThrough(); };
    r["Dropout"] = dropout;

    r["Constant"] = [](const KernelContext& c) -> Kernel {
        at::Tensor value;
        for (const Attribute& a : c.node.attributes) {
            if (a.name == "value" && a.t)
                value = toATen(*a.t, "the value of node '" + c.node.name + "'");
            else if (a.name == "value_float")
                value = at::scalar_tensor(a.f, at::kFloat);
            else if (a.name == "value_int")
                value = at::scalar_tensor(a.i, at::kLong);
            else if (a.name == "value_floats")
                value = at::tensor(a.floats, at::kFloat);
            else if (a.name == "value_ints")
                value = at::tensor(a.ints, at::kLong);
        }
        if (!value.defined())
            c.unsupported("no supported value attribute (sparse and string constants are not supported)");
        return [value](const std::vector<at::Tensor>&, std::vector<at::Tensor>& out) { out[0] = value; };
    };
    r["ConstantOfShape"] = [](const KernelContext& c) -> Kernel {
        const Attribute* a = c.node.attr("value");
        const at::Tensor fill = a && a->t ? toATen(*a->t, "the value of node '" + c.node.name + "'").reshape({})
                                          : at::scalar_tensor(0.0f, at::kFloat);
        return [fill](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::full(intsOf(in[0]), fill.item(), fill.options());
        };
    };
    r["Shape"] = [](const KernelContext& c) -> Kernel {
        const int64_t startAttr = c.node.attrInt("start", 0);
        const auto endAttr = c.node.attr("end") ? c.node.attrInt("end", 0) : INT64_MAX;
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const int64_t rank = in[0].dim();
            int64_t s = startAttr < 0 ? startAttr + rank : startAttr, e = endAttr < 0 ? endAttr + rank : endAttr;
            s = std::clamp<int64_t>(s, 0, rank);
            e = std::clamp<int64_t>(e, 0, rank);
            const std::vector<int64_t> sizes(in[0].sizes().begin(), in[0].sizes().end());
            out[0] = at::tensor(std::vector<int64_t>(sizes.begin() + s, sizes.begin() + std::max(s, e)), at::kLong);
        };
    };
    r["Size"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            out[0] = at::scalar_tensor(in[0].numel(), at::kLong);
        };
    };
    // HannWindow, HammingWindow, BlackmanWindow: `size` values of the window
    // sum_k a_k cos(2 pi k n / N), N the size (periodic) or the size - 1 (symmetric),
    // of output_datatype (float by default).
    auto window = [](std::vector<double> a) {
        return [a](const KernelContext& c) -> Kernel {
            const bool periodic = c.node.attrInt("periodic", 1) != 0;
            const at::ScalarType t = *c.elementTypeAttr("output_datatype", at::kFloat);
            return [a, periodic, t](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                if (in[0].numel() != 1)
                    throw Error(ErrorKind::Runtime, {}, "size holds " + std::to_string(in[0].numel()) + " values, not one");
                const int64_t size = in[0].item<int64_t>();
                if (size < 0 || size > (int64_t(1) << 32))
                    throw Error(ErrorKind::Runtime, {}, "size " + std::to_string(size) + " is outside [0, 2^32]");
                const double n = double(periodic ? size : size - 1);
                const at::Tensor phase = at::arange(size, at::kDouble) * (2 * M_PI / (n > 0 ? n : 1));
                at::Tensor w = at::full({size}, a[0], at::kDouble);
                for (size_t k = 1; k < a.size(); ++k)
                    w = w + a[k] * at::cos(phase * double(k));
                out[0] = w.to(t);
            };
        };
    };
    r["HannWindow"] = window({0.5, -0.5});
    r["HammingWindow"] = window({25.0 / 46, -21.0 / 46});
    r["BlackmanWindow"] = window({0.42, -0.5, 0.08});
    r["Range"] = [](const KernelContext&) -> Kernel {
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::ScalarType t = in[0].scalar_type();
            if (at::isIntegralType(t, /*includeBool=*/false)) {
                out[0] = integerRange(in[0].item<int64_t>(), in[1].item<int64_t>(), in[2].item<int64_t>()).to(t);
                return;
            }
            const double start = in[0].item<double>(), limit = in[1].item<double>(), delta = in[2].item<double>();
            if (delta == 0)
                throw Error(ErrorKind::Runtime, {}, "the step is 0");
            const double count = std::ceil((limit - start) / delta);
            if (!std::isfinite(count) || count > 1e15)
                throw Error(ErrorKind::Runtime, {}, "start, limit and step give no finite number of elements");
            const int64_t n = std::max<int64_t>(0, int64_t(count));
            out[0] = (at::arange(n, at::kDouble) * delta + start).to(t);
        };
    };
}

// Same data, new shape: Reshape, Flatten, Squeeze, Unsqueeze.
void registerReshapeKernels(KernelRegistry& r)
{
    r["Reshape"] = [](const KernelContext& c) -> Kernel {
        const bool allowZero = c.node.attrInt("allowzero", 0) != 0;
        const auto shapeAttr = c.node.attrInts("shape");  // opset 1-4
        const bool fromAttr = c.opset() < 5;
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<int64_t> shape = fromAttr ? shapeAttr : intsOf(in[1]);
            for (size_t i = 0; i < shape.size(); ++i)
                if (shape[i] == 0 && !allowZero)
                    shape[i] = in[0].size(int64_t(i));
            out[0] = in[0].reshape(shape);
        };
    };
    r["Flatten"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", 1);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            if (axisAttr < -x.dim() || axisAttr > x.dim())
                throw Error(ErrorKind::Runtime, {}, "axis " + std::to_string(axisAttr) + " is outside [" +
                                                        std::to_string(-x.dim()) + ", " + std::to_string(x.dim()) +
                                                        "] for an input of rank " + std::to_string(x.dim()));
            const int64_t axis = axisAttr < 0 ? axisAttr + x.dim() : axisAttr;
            int64_t outer = 1;
            for (int64_t i = 0; i < axis; ++i)
                outer *= x.size(i);
            int64_t inner = 1;
            for (int64_t i = axis; i < x.dim(); ++i)
                inner *= x.size(i);
            out[0] = contiguousView(x, {outer, inner});
        };
    };
    r["Squeeze"] = [](const KernelContext& c) -> Kernel {
        return [opset = c.opset(), attr = c.node.attrInts("axes")](const std::vector<at::Tensor>& in,
                                                                      std::vector<at::Tensor>& out) {
            std::vector<int64_t> axes = opset < 13 ? attr : (in.size() > 1 ? intsOf(in[1]) : std::vector<int64_t>{});
            const at::Tensor& x = in[0];
            std::vector<int64_t> shape;
            for (auto& a : axes) {
                a = normalizeAxis(a, x.dim());
                if (x.size(a) != 1)
                    throw Error(ErrorKind::Runtime, {}, "Squeeze of axis " + std::to_string(a) + ", whose size is " +
                                                            std::to_string(x.size(a)) + ", not 1");
            }
            for (int64_t i = 0; i < x.dim(); ++i) {
                const bool drop = axes.empty() ? x.size(i) == 1 : std::count(axes.begin(), axes.end(), i) > 0;
                if (!drop)
                    shape.push_back(x.size(i));
            }
            out[0] = x.reshape(shape);
        };
    };
    r["Unsqueeze"] = [](const KernelContext& c) -> Kernel {
        return [opset = c.opset(), attr = c.node.attrInts("axes")](const std::vector<at::Tensor>& in,
                                                                      std::vector<at::Tensor>& out) {
            std::vector<int64_t> axes = opset < 13 ? attr : intsOf(in[1]);
            const at::Tensor& x = in[0];
            const int64_t rank = x.dim() + int64_t(axes.size());
            for (auto& a : axes)
                a = normalizeAxis(a, rank);
            std::sort(axes.begin(), axes.end());
            if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
                throw Error(ErrorKind::Runtime, {}, "Unsqueeze axes name the output's axis " +
                                                        std::to_string(*std::adjacent_find(axes.begin(), axes.end())) + " twice");
            std::vector<int64_t> shape;
            int64_t src = 0;
            for (int64_t i = 0; i < rank; ++i)
                shape.push_back(std::binary_search(axes.begin(), axes.end(), i) ? 1 : x.size(src++));
            out[0] = x.reshape(shape);
        };
    };
}

// Whether every reader of `v` is a ScatterElements (or Scatter) taking it as its indices
// alone, and the graph does not give it out.
bool onlyScatterIndices(const Graph& g, ValueId v)
{
    const auto& outs = g.outputs();
    if (v == kNone || g.value(v).consumers.empty() || std::find(outs.begin(), outs.end(), v) != outs.end())
        return false;
    for (NodeId id : g.value(v).consumers) {
        const Node& n = g.node(id);
        if ((n.opType != "ScatterElements" && n.opType != "Scatter") || !n.domain.empty() || n.input(1) != v ||
            n.input(0) == v || n.input(2) == v)
            return false;
    }
    return true;
}

// The data rearranged or repeated: Transpose, Expand, Tile.
void registerTransposeExpandTileKernels(KernelRegistry& r)
{
    r["Transpose"] = [](const KernelContext& c) -> Kernel {
        const auto permAttr = c.node.attrInts("perm");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<int64_t> perm = permAttr;
            if (perm.empty())
                for (int64_t i = in[0].dim(); i-- > 0;)
                    perm.push_back(i);
            const at::Tensor y = in[0].permute(perm);
            // NHWC back to NCHW (ConvNeXt's permute around its LayerNorm and Linear layers): the
            // view is the channels-last layout the next convolution wants, so no copy either way.
            out[0] = y.dim() == 4 && y.is_contiguous(at::MemoryFormat::ChannelsLast) ? y : y.contiguous();
        };
    };
    r["Expand"] = [](const KernelContext& c) -> Kernel {
        // Where only ScatterElements read the result, as their indices, it stays a view of the
        // input (strides of 0 where it repeats): they take a slice's one index from it rather
        // than a copy per element (torchvision's detectors expand [R, 1, 1, 1] to [R, 256, 7, 7]).
        const bool view = onlyScatterIndices(c.graph, c.node.outputs[0]);
        return [view](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            // Bidirectional broadcast of the input shape and the given shape: dimensions
            // aligned from the right must be equal or one of them 1.
            const std::vector<int64_t> target = intsOf(in[1]);
            const at::Tensor& x = in[0];
            const int64_t rank = std::max<int64_t>(x.dim(), int64_t(target.size()));
            std::vector<int64_t> shape(size_t(rank), 1);
            for (int64_t i = 0; i < rank; ++i) {
                const int64_t a = i - (rank - x.dim()) >= 0 ? x.size(i - (rank - x.dim())) : 1;
                const int64_t b = i - (rank - int64_t(target.size())) >= 0 ? target[size_t(i - (rank - int64_t(target.size())))] : 1;
                if (b < 0 || (a != b && a != 1 && b != 1))
                    throw Error(ErrorKind::Runtime, {}, "Expand cannot broadcast an input of shape " + shapeText(x.sizes()) +
                                                            " to the shape " + shapeText(target));
                shape[size_t(i)] = a == 1 ? b : a;
            }
            out[0] = view ? x.expand(shape) : x.expand(shape).contiguous();
        };
    };
    r["Tile"] = [](const KernelContext& c) -> Kernel {
        if (c.opset() < 6)  // tiles copies along axis, both inputs
            return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
                const at::Tensor& x = in[0];
                if (in.size() < 3 || in[1].numel() != 1 || in[2].numel() != 1)
                    throw Error(ErrorKind::Runtime, {}, "Tile before opset 6 takes one number of tiles and one axis");
                std::vector<int64_t> repeats(size_t(x.dim()), 1);
                const int64_t tiles = int64_t(in[1].item<double>());
                if (tiles < 0)
                    throw Error(ErrorKind::Runtime, {}, "Tile of " + std::to_string(tiles) + " copies");
                repeats[size_t(normalizeAxis(int64_t(in[2].item<double>()), x.dim()))] = tiles;
                out[0] = x.repeat(repeats);
            };
        return [](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) { out[0] = in[0].repeat(intsOf(in[1])); };
    };
}

// Joining and cutting: Concat, Split, Slice, Gather.
void registerConcatSliceGatherKernels(KernelRegistry& r)
{
    r["Concat"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", 0);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            std::vector<at::Tensor> parts;
            for (const auto& t : in)
                if (t.defined())
                    parts.push_back(t);
            const int64_t axis = normalizeAxis(axisAttr, in[0].dim());
            out[0] = axis == 1 && concatChannelsLastApplies(parts) ? concatChannelsLast(parts) : at::cat(parts, axis);
        };
    };
    r["Split"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", 0);
        const auto splitAttr = c.node.attrInts("split");
        const int64_t opset = c.opset();
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            std::vector<int64_t> sizes = opset < 13 ? splitAttr : (in.size() > 1 ? intsOf(in[1]) : std::vector<int64_t>{});
            if (out.empty())
                throw Error(ErrorKind::Runtime, {}, "Split has no outputs");
            if (sizes.empty()) {
                SplitParts p = splitParts(opset, x.size(axis), int64_t(out.size()));
                if (!p.problem.empty())
                    throw Error(ErrorKind::Runtime, {}, "Split of axis " + std::to_string(axis) + ": " + p.problem);
                sizes = std::move(p.sizes);
            }
            const auto parts = x.split_with_sizes(sizes, axis);
            for (size_t i = 0; i < out.size() && i < parts.size(); ++i)
                out[i] = parts[i].contiguous();
        };
    };
    r["Slice"] = [](const KernelContext& c) -> Kernel {
        const int64_t opset = c.opset();
        const bool attrs = opset < 10;
        // Starts, ends, axes and steps from the attributes (before opset 10) or from inputs 1-4,
        // read once here where those are constants (every exported model's): reading them per
        // run took 3-30 us a node inside ViT, ATen's conversions cold after each MatMul.
        auto listOf = [&](size_t input, const char* attr) -> std::optional<std::vector<int64_t>> {
            if (attrs)
                return c.node.attrInts(attr);
            if (!c.hasInput(input))
                return std::vector<int64_t>{};
            if (c.isConstant(input))
                return intsOf(c.constants[input]);
            return std::nullopt;
        };
        const auto startsC = listOf(1, "starts"), endsC = listOf(2, "ends"), axesC = listOf(3, "axes"),
                   stepsC = attrs ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{}) : listOf(4, "");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            auto given = [&](const std::optional<std::vector<int64_t>>& known, size_t input) {
                return known ? *known : in.size() > input ? intsOf(in[input]) : std::vector<int64_t>{};
            };
            at::Tensor y = in[0];
            const auto starts = given(startsC, 1), ends = given(endsC, 2), steps = given(stepsC, 4);
            auto axes = given(axesC, 3);
            if (axes.empty())
                for (size_t i = 0; i < starts.size(); ++i)
                    axes.push_back(int64_t(i));
            if (starts.size() != axes.size() || ends.size() != axes.size() || (!steps.empty() && steps.size() != axes.size()))
                throw Error(ErrorKind::Runtime, {}, "starts, ends, axes and steps differ in length");
            for (size_t i = 0; i < axes.size(); ++i) {
                const int64_t axis = normalizeAxis(axes[i], y.dim());
                for (size_t j = 0; j < i; ++j)
                    if (normalizeAxis(axes[j], y.dim()) == axis)
                        throw Error(ErrorKind::Runtime, {}, "Slice axes " + shapeText(axes) + " name an axis twice");
                int64_t step = steps.empty() ? 1 : steps[i];
                if (step == 0)
                    throw Error(ErrorKind::Usage, {}, "Slice step 0");
                int64_t s = starts[i], e = ends[i];
                clampSlice(y.size(axis), step, s, e);
                if (step > 0)
                    y = y.slice(axis, s, std::max(s, e), step);
                else
                    y = s > e ? y.index_select(axis, at::arange(s, e, step, at::kLong)) : y.slice(axis, 0, 0);
            }
            out[0] = y.contiguous();  // a contiguous part (leading sizes of one) stays a view
        };
    };
    // fuse-channel-shuffle's node (core/ir/fused_ops.h): on channels-last float
    // activations each output in one pass over pixels (channels_last.h); otherwise
    // ATen's Concat, Reshape, Transpose and Split.
    r[std::string(kRamielDomain) + ":" + kChannelShuffle] = [](const KernelContext& c) -> Kernel {
        const int64_t group = c.node.attrInt("group", 1);
        const std::vector<int64_t> split = c.node.attrInts("split");
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            int64_t channels = 0;
            for (const at::Tensor& t : in) {
                if (t.dim() != 4)
                    throw Error(ErrorKind::Runtime, {}, "ChannelShuffle takes inputs of rank 4, not " + std::to_string(t.dim()));
                channels += t.size(1);
            }
            int64_t total = 0;
            for (int64_t s : split)
                total += s;
            if (group < 1 || channels % group || total != channels || split.size() != out.size())
                throw Error(ErrorKind::Runtime, {}, "ChannelShuffle of " + std::to_string(channels) + " channels in " +
                                                        std::to_string(group) + " groups cannot be cut into " +
                                                        std::to_string(split.size()) + " outputs of " +
                                                        std::to_string(total) + " channels");
            if (channelShuffleChannelsLastApplies(in)) {
                std::vector<at::Tensor> ys = channelShuffleChannelsLast(in, group, split);
                for (size_t i = 0; i < out.size(); ++i)
                    out[i] = std::move(ys[i]);
                return;
            }
            const at::Tensor x = in.size() == 1 ? in[0] : at::cat(in, 1);
            const int64_t n = x.size(0), h = x.size(2), w = x.size(3);
            const at::Tensor y = x.reshape({n, group, channels / group, h, w}).transpose(1, 2).reshape({n, channels, h, w});
            const auto parts = y.split_with_sizes(split, 1);
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = parts[i].contiguous();
        };
    };
    r["Gather"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", 0);
        // One constant index (Swin's q, k, v = qkv[0], qkv[1], qkv[2]): x's entry along the axis,
        // a view where it is a contiguous block of a contiguous x (sizes of one before the
        // axis), which is no copy: swin_t's first stage copied 1.2 MB per Gather, 68-180 us.
        const std::optional<int64_t> one =
            c.isConstant(1) && c.constants[1].numel() == 1 && c.constants[1].dim() <= 1 && !c.constants[1].is_floating_point()
                ? std::optional<int64_t>(c.constants[1].reshape({}).item<int64_t>())
                : std::nullopt;
        const bool keepDim = one && c.constants[1].dim() == 1;
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const at::Tensor& x = in[0];
            const int64_t axis = normalizeAxis(axisAttr, x.dim());
            if (one && x.dim() > 0 && x.is_contiguous()) {
                const int64_t n = x.size(axis), i = *one < 0 ? *one + n : *one;
                if (i < 0 || i >= n)
                    throw Error(ErrorKind::Runtime, {}, "Gather index " + std::to_string(*one) + " is outside [" +
                                                            std::to_string(-n) + ", " + std::to_string(n) + ")");
                const at::Tensor y = keepDim ? x.narrow(axis, i, 1) : x.select(axis, i);
                out[0] = y.contiguous();
                return;
            }
            at::Tensor idx = in[1].to(at::kLong);
            idx = at::where(idx < 0, idx + x.size(axis), idx);
            std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + axis);
            shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
            shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
            out[0] = x.index_select(axis, idx.reshape({-1})).reshape(shape);
        };
    };
}

// Upsample (opsets 7-9; deprecated at 10): scales as an attribute, then as input 1;
// output index o reads the input at o / scale, floored (nearest) or interpolated (linear).
Kernel upsampleKernel(const KernelContext& c)
{
    const std::string mode = c.node.attrString("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && mode != "bilinear")
        c.unsupported("Upsample mode '" + mode + "' is not nearest or linear");
    const bool fromAttr = c.opset() < 9;
    const auto scalesAttr = c.node.attr("scales") ? c.node.attr("scales")->floats : std::vector<float>{};
    return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
        at::Tensor y = in[0];
        const int64_t rank = y.dim();
        std::vector<double> scales;
        if (fromAttr) {
            scales.assign(scalesAttr.begin(), scalesAttr.end());
        } else {
            const at::Tensor s = in[1].to(at::kDouble).contiguous();
            scales.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
        }
        if (int64_t(scales.size()) != rank)
            throw Error(ErrorKind::Runtime, {}, "scales has " + std::to_string(scales.size()) +
                                                    " values for an input of rank " + std::to_string(rank));
        static const std::string coord = "asymmetric";
        std::vector<int64_t> sizes;
        for (int64_t axis = 0; axis < rank; ++axis)
            sizes.push_back(scaledSize(y.size(axis), scales[size_t(axis)], axis));
        if (resizedIsEmpty(y.sizes(), sizes, y.element_size())) {
            out[0] = at::empty(sizes, y.options());
            return;
        }
        for (int64_t axis = 0; axis < rank; ++axis) {
            const double scale = scales[size_t(axis)];
            const int64_t inSize = y.size(axis), outSize = sizes[size_t(axis)];
            if (scale == 1.0)
                continue;
            const ResizeAxis ax{axis, inSize, outSize, scale, double(inSize) * scale, coord, std::nullopt};
            y = mode == "nearest" ? resizeNearest(y, ax, "floor") : resizeLinear(y, ax);
        }
        out[0] = y.contiguous();
    };
}

void registerPadResizeKernels(KernelRegistry& r)
{
    r["Pad"] = padKernel;
    r["Resize"] = resizeKernel;
    r["Upsample"] = upsampleKernel;
}

// The k largest (or smallest) elements along `axis` and their indices, in order, equal
// elements by index (a stable sort's first k): per row, the k first selected, then sorted,
// by value and then index, a total order. NaN counts as the largest, as in at::sort.
std::tuple<at::Tensor, at::Tensor> topK(const at::Tensor& x, int64_t k, int64_t axis, bool largest)
{
    if (!at::isFloatingType(x.scalar_type()) && !at::isIntegralType(x.scalar_type(), /*includeBool=*/false)) {
        auto [values, indices] = at::sort(x, /*stable=*/true, axis, /*descending=*/largest);
        return {values.narrow(axis, 0, k), indices.narrow(axis, 0, k)};
    }
    const at::Tensor rows = x.movedim(axis, -1).contiguous();
    const int64_t n = rows.size(-1), count = n > 0 ? rows.numel() / n : 0;
    std::vector<int64_t> shape = rows.sizes().vec();
    shape.back() = k;
    at::Tensor values = at::empty(shape, rows.options()), indices = at::empty(shape, rows.options().dtype(at::kLong));
    AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, rows.scalar_type(), "TopK", [&] {
        const scalar_t* xp = rows.data_ptr<scalar_t>();
        scalar_t* vp = values.data_ptr<scalar_t>();
        int64_t* ip = indices.data_ptr<int64_t>();
        at::parallel_for(0, count, std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
            std::vector<int64_t> order(static_cast<size_t>(n));
            for (int64_t row = begin; row < end; ++row) {
                const scalar_t* v = xp + row * n;
                const auto isNan = [](scalar_t e) {
                    if constexpr (std::is_integral_v<scalar_t>)
                        return false;
                    else
                        return std::isnan(double(e));
                };
                const auto before = [&](int64_t a, int64_t b) {
                    const bool nanA = isNan(v[a]), nanB = isNan(v[b]);
                    if (nanA != nanB)
                        return largest ? nanA : nanB;
                    if (!nanA && v[a] != v[b])
                        return largest ? v[a] > v[b] : v[a] < v[b];
                    return a < b;
                };
                std::iota(order.begin(), order.end(), int64_t(0));
                if (k < n)
                    std::nth_element(order.begin(), order.begin() + k, order.end(), before);
                std::sort(order.begin(), order.begin() + k, before);
                for (int64_t j = 0; j < k; ++j) {
                    vp[row * k + j] = v[order[size_t(j)]];
                    ip[row * k + j] = order[size_t(j)];
                }
            }
        });
    });
    return {values.movedim(-1, axis), indices.movedim(-1, axis)};
}

// Reductions over axes, arg-reductions, TopK.
void registerReductionKernels(KernelRegistry& r)
{
    r["ReduceMean"] = reduction(
        [](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
            // Over the two spatial axes of a channels-last activation (x.mean([2, 3]) closing
            // MnasNet): global average pooling's kernel, half ATen's time on its 1280 x 7 x 7
            // (42 -> 20 us on one thread).
            std::vector<int64_t> sorted = a;
            std::sort(sorted.begin(), sorted.end());
            if (isChannelsLastFloat(x) && sorted == std::vector<int64_t>{2, 3}) {
                const at::Tensor y = globalAveragePoolChannelsLast(x);
                return k ? y : contiguousView(y, {x.size(0), x.size(1)});
            }
            return x.mean(a, k);
        },
        18);
    r["ReduceSum"] = reduction([](const at::Tensor& x, const std::vector<int64_t>& a, bool k) { return x.sum(a, k); }, 13);
    r["ReduceMax"] = reduction([](const at::Tensor& x, const std::vector<int64_t>& a, bool k) { return x.amax(a, k); }, 18);
    r["ReduceMin"] = reduction([](const at::Tensor& x, const std::vector<int64_t>& a, bool k) { return x.amin(a, k); }, 18);
    r["ReduceProd"] = reduction([](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        at::Tensor y = x;
        std::vector<int64_t> sorted = a;
        std::sort(sorted.rbegin(), sorted.rend());
        for (int64_t d : sorted)
            y = y.prod(d, k);
        return y;
    }, 18);
    // The others compute in the input's type (sums of integers stay integers, as ONNX has them).
    auto same = [](const at::Tensor& y, const at::Tensor& x) { return y.to(x.scalar_type()); };
    r["ReduceL1"] = reduction([same](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        return same(x.abs().sum(a, k), x);
    }, 18);
    r["ReduceL2"] = reduction([same](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        const at::Tensor xd = at::isFloatingType(x.scalar_type()) ? x : x.to(at::kDouble);
        return same((xd * xd).sum(a, k).sqrt(), x);
    }, 18);
    r["ReduceSumSquare"] = reduction([same](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        return same((x * x).sum(a, k), x);
    }, 18);
    r["ReduceLogSum"] = reduction([same](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        const at::Tensor xd = at::isFloatingType(x.scalar_type()) ? x : x.to(at::kDouble);
        return same(xd.sum(a, k).log(), x);
    }, 18);
    r["ReduceLogSumExp"] = reduction([same](const at::Tensor& x, const std::vector<int64_t>& a, bool k) {
        const at::Tensor xd = at::isFloatingType(x.scalar_type()) ? x : x.to(at::kDouble);
        return same(at::logsumexp(xd, a, k), x);
    }, 18);
    r["ArgMax"] = argReduce(true);
    r["ArgMin"] = argReduce(false);
    r["TopK"] = [](const KernelContext& c) -> Kernel {
        const int64_t axisAttr = c.node.attrInt("axis", -1);
        const bool largest = c.node.attrInt("largest", 1) != 0, sorted = c.node.attrInt("sorted", 1) != 0;
        const int64_t opset = c.opset();
        const int64_t kAttr = c.node.attrInt("k", 0);
        return [=](const std::vector<at::Tensor>& in, std::vector<at::Tensor>& out) {
            const int64_t k = opset < 10 ? kAttr : intsOf(in[1]).at(0);
            // ONNX: of equal elements the one with the lower index comes first. at::topk
            // breaks ties as it likes (which boxes an RPN keeps then differs); a stable
            // sort does not. The order is the sorted one whether or not `sorted` asks.
            (void)sorted;
            const int64_t axis = normalizeAxis(axisAttr, in[0].dim());
            if (k < 0 || k > in[0].size(axis))
                throw Error(ErrorKind::Runtime, {}, "k " + std::to_string(k) + " is out of range for " +
                                                        std::to_string(in[0].size(axis)) + " elements");
            auto [values, indices] = topK(in[0], k, axis, largest);
            out[0] = std::move(values);
            if (out.size() > 1)
                out[1] = std::move(indices);
        };
    };
}

}  // namespace

void registerShapeKernels(KernelRegistry& r)
{
    registerConstantKernels(r);
    registerReshapeKernels(r);
    registerTransposeExpandTileKernels(r);
    registerConcatSliceGatherKernels(r);
    registerPadResizeKernels(r);
    registerReductionKernels(r);
}

}  // namespace ramiel
