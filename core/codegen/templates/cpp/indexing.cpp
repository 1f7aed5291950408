// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// ONNX's indexing operators where their indices are computed when the model runs: ONNX counts
// negative indices from the end, and TopK puts the lower index first among equal values.

// Indices in [-size, size) counted from the start.
at::Tensor fromStart(const at::Tensor& indices, int64_t size)
{
    return at::where(indices < 0, indices + size, indices);
}

// ONNX's Gather: x's entries along `axis` at `indices`, whose shape replaces that axis.
at::Tensor onnxGather(const at::Tensor& x, int64_t axis, const at::Tensor& indices)
{
    axis = axis < 0 ? axis + x.dim() : axis;
    const at::Tensor i = fromStart(indices, x.size(axis));
    Ints shape(x.sizes().begin(), x.sizes().begin() + axis);
    shape.insert(shape.end(), i.sizes().begin(), i.sizes().end());
    shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
    return at::index_select(x, axis, i.reshape({-1})).reshape(shape);
}

// The flat position among the first indices.size(-1) axes of `shape` that each row of indices'
// last axis addresses.
at::Tensor linearIndex(const at::Tensor& indices, at::IntArrayRef shape)
{
    at::Tensor linear = at::zeros(indices.sizes().slice(0, indices.dim() - 1), at::kLong);
    for (int64_t j = 0; j < indices.size(-1); ++j)
        linear = linear * shape[size_t(j)] + fromStart(indices.select(-1, j).to(at::kLong), shape[size_t(j)]);
    return linear;
}

// ONNX's GatherND: the slices of data that the last axis of indices addresses, the first batchDims
// axes of both shared.
at::Tensor onnxGatherNd(const at::Tensor& data, const at::Tensor& indices, int64_t batchDims)
{
    const int64_t k = indices.size(-1);
    const at::Tensor linear = linearIndex(indices, data.sizes().slice(size_t(batchDims)));
    int64_t batch = 1, positions = 1;
    for (int64_t i = 0; i < batchDims; ++i)
        batch *= data.size(i);
    for (int64_t i = batchDims; i < batchDims + k; ++i)
        positions *= data.size(i);
    Ints flat{batch * positions}, shape(indices.sizes().begin(), indices.sizes().end() - 1);
    flat.insert(flat.end(), data.sizes().begin() + batchDims + k, data.sizes().end());
    shape.insert(shape.end(), data.sizes().begin() + batchDims + k, data.sizes().end());
    const at::Tensor offsets = (at::arange(batch, at::kLong) * positions).reshape({batch, -1});
    const at::Tensor rows = (linear.reshape({batch, -1}) + offsets).reshape({-1});
    return data.reshape(flat).index_select(0, rows).reshape(shape);
}

// ONNX's GatherElements: x's entries along `axis` at indices of x's rank.
at::Tensor onnxGatherElements(const at::Tensor& x, int64_t axis, const at::Tensor& indices)
{
    axis = axis < 0 ? axis + x.dim() : axis;
    return at::gather(x, axis, fromStart(indices, x.size(axis)).to(at::kLong));
}

// ONNX's ScatterElements: data with updates written at indices along `axis`, or combined with
// what is there by `reduction` ("add", "mul", "max", "min").
at::Tensor onnxScatterElements(const at::Tensor& data, int64_t axis, const at::Tensor& indices, const at::Tensor& updates,
                               const std::string& reduction)
{
    const at::Tensor i = fromStart(indices, data.size(axis)).to(at::kLong);
    if (reduction == "none")
        return at::scatter(data, axis, i, updates);
    if (reduction == "add")
        return at::scatter_add(data, axis, i, updates);
    return at::scatter_reduce(data, axis, i, updates, reduction == "mul" ? "prod" : reduction == "max" ? "amax" : "amin");
}

// ONNX's ScatterND: data with the slices that the last axis of indices addresses replaced by
// updates, or combined with them by `reduction` ("add", "mul", "max", "min").
at::Tensor onnxScatterNd(const at::Tensor& data, const at::Tensor& indices, const at::Tensor& updates,
                         const std::string& reduction)
{
    Ints rest{-1};
    rest.insert(rest.end(), data.sizes().begin() + indices.size(-1), data.sizes().end());
    at::Tensor y = data.clone().reshape(rest);
    const at::Tensor rows = linearIndex(indices, data.sizes()).reshape({-1});
    const at::Tensor parts = updates.to(data.scalar_type()).reshape(rest);
    if (reduction == "none")
        y.index_copy_(0, rows, parts);
    else if (reduction == "add")
        y.index_add_(0, rows, parts);
    else
        y.index_reduce_(0, rows, parts, reduction == "mul" ? "prod" : reduction == "max" ? "amax" : "amin", true);
    return y.reshape(data.sizes());
}

// ONNX's OneHot: values[1] where an index (negative ones counted from the end) meets its position
// along a new axis of `depth` entries, values[0] elsewhere.
at::Tensor onnxOneHot(const at::Tensor& indices, const at::Tensor& depth, const at::Tensor& values, int64_t axis)
{
    const auto n = static_cast<int64_t>(depth.to(at::kDouble).item<double>());
    const at::Tensor hot = fromStart(indices.to(at::kDouble).floor().to(at::kLong), n).unsqueeze(-1) == at::arange(n, at::kLong);
    const at::Tensor v = values.reshape({2});
    return at::where(hot, v[1], v[0]).movedim(-1, axis).contiguous();
}

// ONNX's TopK: the k largest (or smallest) values along `axis`, sorted, and their indices,
// equal values by index (at::topk orders them as it likes). Per row the k first are
// selected, then sorted by value and index; NaN counts as the largest, as in at::sort.
std::vector<at::Tensor> onnxTopK(const at::Tensor& x, int64_t k, int64_t axis, bool largest)
{
    if (k < 0 || k > x.size(axis))
        throw std::runtime_error("TopK: k " + std::to_string(k) + " is out of range for " +
                                 std::to_string(x.size(axis)) + " elements");
    if (!x.is_floating_point()) {  // integers: a stable sort (a double would make large neighbours equal)
        const auto [values, indices] = at::sort(x, /*stable=*/true, axis, /*descending=*/largest);
        return {values.narrow(axis, 0, k), indices.narrow(axis, 0, k)};
    }
    const at::Tensor rows = x.movedim(axis, -1).to(at::kDouble).contiguous();
    const int64_t n = rows.size(-1), count = n > 0 ? rows.numel() / n : 0;
    std::vector<int64_t> shape = rows.sizes().vec();
    shape.back() = k;
    at::Tensor indices = at::empty(shape, at::kLong);
    const double* v = rows.data_ptr<double>();
    int64_t* out = indices.data_ptr<int64_t>();
    at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> order(static_cast<size_t>(n));
        for (int64_t row = begin; row < end; ++row) {
            const double* r = v + row * n;
            auto before = [&](int64_t a, int64_t b) {
                if (std::isnan(r[a]) != std::isnan(r[b]))
                    return largest ? std::isnan(r[a]) : std::isnan(r[b]);
                if (r[a] != r[b] && !std::isnan(r[a]))
                    return largest ? r[a] > r[b] : r[a] < r[b];
                return a < b;
            };
            std::iota(order.begin(), order.end(), int64_t(0));
            if (k < n)
                std::nth_element(order.begin(), order.begin() + k, order.end(), before);
            std::sort(order.begin(), order.begin() + k, before);
            std::copy(order.begin(), order.begin() + k, out + row * k);
        }
    });
    indices = indices.movedim(-1, axis);
    return {x.gather(axis, indices), indices};
}

// k computed when the code runs: a tensor of one.
std::vector<at::Tensor> onnxTopK(const at::Tensor& x, const at::Tensor& k, int64_t axis, bool largest)
{
    return onnxTopK(x, k.item<int64_t>(), axis, largest);
}

// ONNX's Trilu with k computed (a tensor of one value): the upper or lower triangle from diagonal
// k, clamped to the matrix (ATen refuses a k far beyond it).
at::Tensor onnxTrilu(const at::Tensor& x, const at::Tensor& k, bool upper)
{
    const int64_t limit = x.size(-1) + x.size(-2) + 1;
    const int64_t d = std::clamp<int64_t>(k.item<int64_t>(), -limit, limit);
    return upper ? at::triu(x, d) : at::tril(x, d);
}

// Where output o of `size` along an axis of n reads the input (ONNX's coordinate_transformation_mode
// `mode`; length: the output's unrounded length, n * scale where scales were given; for
// tf_crop_and_resize, scale and length are roi's start and end on the axis, fractions of its last
// index).
double onnxResizeSource(int64_t n, int64_t size, int64_t o, double scale, double length, const std::string& mode)
{
    const double x = double(o);
    if (mode == "tf_crop_and_resize") {  // beyond two of the input's ends only the side matters
        const double start = scale, end = length, last = double(n - 1);
        const double source = size > 1 ? start * last + x * (end - start) * last / double(size - 1) : 0.5 * (start + end) * last;
        return std::clamp(source, -2.0, last + 2.0);
    }
    if (mode == "asymmetric")
        return x / scale;
    if (mode == "align_corners")
        return length == 1.0 ? 0.0 : x * double(n - 1) / (length - 1.0);
    if (mode == "tf_half_pixel_for_nn")
        return (x + 0.5) / scale;
    if (mode == "pytorch_half_pixel" && length <= 1.0)
        return 0.0;
    return (x + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

// ONNX's nearest Resize along one axis: each output takes the input at its source coordinate
// rounded as `nearest` says (floor, ceil, round_prefer_floor, round_prefer_ceil: which way halves
// go), clamped to the axis.
at::Tensor onnxResizeNearest(const at::Tensor& x, int64_t axis, int64_t size, double scale, double length,
                             const std::string& mode, const std::string& nearest)
{
    const int64_t n = x.size(axis);
    Ints index(size_t(size), 0);
    for (int64_t o = 0; o < size; ++o) {
        const double src = onnxResizeSource(n, size, o, scale, length, mode), fl = std::floor(src);
        const double i = nearest == "floor" ? fl
                         : nearest == "ceil" ? std::ceil(src)
                         : src - fl == 0.5   ? fl + (nearest == "round_prefer_ceil" ? 1.0 : 0.0)
                                             : std::round(src);
        index[size_t(o)] = std::clamp<int64_t>(int64_t(i), 0, n - 1);
    }
    return x.index_select(axis, at::tensor(index, at::kLong));
}

// ONNX's linear Resize along one axis, in a coordinate mode upsample_bilinear2d lacks: output o
// reads the input at its source coordinate, clamped to the axis, between its two neighbours.
at::Tensor onnxResizeLinear(const at::Tensor& x, int64_t axis, int64_t size, double scale, double length,
                            const std::string& mode)
{
    const int64_t n = x.size(axis);
    Ints lo(size_t(size), 0), hi(size_t(size), 0);
    std::vector<float> w(size_t(size), 0.0f);
    for (int64_t o = 0; o < size; ++o) {
        const double src = std::clamp(onnxResizeSource(n, size, o, scale, length, mode), 0.0, double(n - 1));
        lo[size_t(o)] = int64_t(std::floor(src));
        hi[size_t(o)] = std::min(lo[size_t(o)] + 1, n - 1);
        w[size_t(o)] = float(src - double(lo[size_t(o)]));
    }
    Ints shape(size_t(x.dim()), 1);
    shape[size_t(axis)] = size;
    const at::Tensor weight = at::tensor(w, at::kFloat).reshape(shape).to(x.scalar_type());
    const at::Tensor a = x.index_select(axis, at::tensor(lo, at::kLong));
    return a + (x.index_select(axis, at::tensor(hi, at::kLong)) - a) * weight;
}

// ONNX's cubic Resize along one axis: four taps around each source coordinate weighted by Keys'
// kernel with coefficient a, edge values outside the axis (with exclude_outside, those taps'
// weights dropped and the others renormalized), summed in double.
at::Tensor onnxResizeCubic(const at::Tensor& x, int64_t axis, int64_t size, double scale, double length,
                           const std::string& mode, double a, bool excludeOutside)
{
    const int64_t n = x.size(axis);
    auto keys = [a](double d) {
        d = std::abs(d);
        if (d <= 1)
            return ((a + 2) * d - (a + 3)) * d * d + 1;
        return d < 2 ? ((a * d - 5 * a) * d + 8 * a) * d - 4 * a : 0.0;
    };
    std::vector<Ints> taps(4, Ints(size_t(size), 0));
    std::vector<std::vector<float>> weights(4, std::vector<float>(size_t(size), 0.0f));
    for (int64_t o = 0; o < size; ++o) {
        const double src = onnxResizeSource(n, size, o, scale, length, mode);
        double w[4], total = 0;
        for (int k = 0; k < 4; ++k) {
            const int64_t tap = int64_t(std::floor(src)) + k - 1;
            w[k] = excludeOutside && (tap < 0 || tap >= n) ? 0.0 : keys(src - double(tap));
            total += w[k];
            taps[size_t(k)][size_t(o)] = std::clamp<int64_t>(tap, 0, n - 1);
        }
        for (int k = 0; k < 4; ++k)
            weights[size_t(k)][size_t(o)] = float(excludeOutside && total != 0 ? w[k] / total : w[k]);
    }
    Ints shape(size_t(x.dim()), 1);
    shape[size_t(axis)] = size;
    const at::Tensor xd = x.to(at::kDouble);
    at::Tensor y;
    for (int k = 0; k < 4; ++k) {
        const at::Tensor part = xd.index_select(axis, at::tensor(taps[size_t(k)], at::kLong)) *
                                at::tensor(weights[size_t(k)], at::kFloat).to(at::kDouble).reshape(shape);
        y = k == 0 ? part : y + part;
    }
    return y.to(x.scalar_type());
}

// ONNX's Resize with scales or sizes computed when the model runs (one of them undefined), or in
// the tf_crop_and_resize mode: each axis whose size, scale or region changes, in turn, through the
// helpers above (sizes: the output's, each axis's scale out / in; scales: each output size
// floor(in * scale)). tf_crop_and_resize spans roi's part of each axis (its starts, then its ends;
// the whole axis without a roi), and an output whose source lies outside the input on any axis is
// `extrapolation`, set last.
at::Tensor onnxResize(const at::Tensor& x, const at::Tensor& scales, const at::Tensor& sizes, const std::string& mode,
                      const std::string& coordinates, const std::string& nearest, double cubicA, bool excludeOutside,
                      const at::Tensor& roi = {}, double extrapolation = 0.0)
{
    const int64_t n = x.dim();
    Ints out;
    std::vector<double> scale, length;
    if (sizes.defined() && sizes.numel() > 0) {
        const at::Tensor values = sizes.to(at::kLong).contiguous();
        out.assign(values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + values.numel());
        for (size_t i = 0; i < out.size() && int64_t(i) < n; ++i) {
            scale.push_back(x.size(int64_t(i)) ? double(out[i]) / double(x.size(int64_t(i))) : 1.0);
            length.push_back(double(out[i]));
        }
    } else {
        const at::Tensor s = scales.to(at::kDouble).contiguous();
        scale.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
        for (size_t i = 0; i < scale.size() && int64_t(i) < n; ++i) {
            length.push_back(double(x.size(int64_t(i))) * scale[i]);
            out.push_back(int64_t(std::floor(length.back())));
        }
    }
    if (int64_t(out.size()) != n || int64_t(scale.size()) != n)
        throw std::runtime_error("Resize: sizes or scales do not match the input's rank");
    const bool crop = coordinates == "tf_crop_and_resize";
    std::vector<double> region(size_t(2 * n), 0.0);
    std::fill(region.begin() + n, region.end(), 1.0);
    if (crop && roi.defined() && roi.numel() > 0) {
        if (roi.numel() != 2 * n)
            throw std::runtime_error("Resize: roi has " + std::to_string(roi.numel()) + " values for an input of rank " +
                                     std::to_string(n));
        const at::Tensor values = roi.to(at::kDouble).contiguous();
        region.assign(values.data_ptr<double>(), values.data_ptr<double>() + 2 * n);
    }
    std::vector<std::pair<int64_t, Ints>> outside;
    at::Tensor y = x;
    for (int64_t axis = 0; axis < n; ++axis) {
        const size_t a = size_t(axis);
        if (y.size(axis) == out[a] && scale[a] == 1.0 && region[a] == 0.0 && region[a + size_t(n)] == 1.0)
            continue;
        const double first = crop ? region[a] : scale[a], second = crop ? region[a + size_t(n)] : length[a];
        if (crop) {
            Ints beyond;
            for (int64_t o = 0; o < out[a]; ++o) {
                const double src = onnxResizeSource(y.size(axis), out[a], o, first, second, coordinates);
                if (src < 0 || src > double(y.size(axis) - 1))
                    beyond.push_back(o);
            }
            outside.emplace_back(axis, std::move(beyond));
        }
        y = mode == "nearest" ? onnxResizeNearest(y, axis, out[a], first, second, coordinates, nearest)
            : mode == "cubic" ? onnxResizeCubic(y, axis, out[a], first, second, coordinates, cubicA, excludeOutside)
                              : onnxResizeLinear(y, axis, out[a], first, second, coordinates);
    }
    for (const auto& [axis, outputs] : outside)
        y = y.index_fill(axis, at::tensor(outputs, at::kLong), extrapolation);
    return y;
}

// ONNX's Compress: the slices of x along axis (of x flattened where axis is undefined) whose
// condition is true; the condition may be shorter than the axis.
at::Tensor onnxCompress(const at::Tensor& x, const at::Tensor& condition, std::optional<int64_t> axis)
{
    return (axis ? x : x.reshape({-1})).index_select(axis.value_or(0), at::nonzero(condition).reshape({-1}));
}

// ONNX's Unique: the distinct values (slices along axis; of x flattened where undefined), sorted
// or in the order they first appear, with the index of each one's first appearance, each
// element's (slice's) index among them, and how often each appears.
std::vector<at::Tensor> onnxUnique(const at::Tensor& input, std::optional<int64_t> axis, bool sorted)
{
    const at::Tensor x = axis ? input : input.reshape({-1});
    const int64_t a = axis.value_or(0), n = x.size(a);
    auto [y, inverse, counts] = axis ? at::unique_dim(x, a, true, true, true) : at::_unique2(x, true, true, true);
    inverse = inverse.reshape({-1});
    const at::Tensor first = at::full({counts.numel()}, n, at::kLong)
                                 .scatter_reduce(0, inverse, at::arange(n, at::kLong), "amin", /*include_self=*/true);
    if (sorted)
        return {y, first, inverse, counts};
    const at::Tensor order = at::argsort(first);  // the distinct values by first appearance
    const at::Tensor rank = at::empty_like(order).scatter_(0, order, at::arange(order.numel(), at::kLong));
    return {y.index_select(a, order), first.index_select(0, order), rank.index_select(0, inverse),
            counts.index_select(0, order)};
}

// 2-D MaxPool's values and ONNX's indices, which count over the whole tensor (row-major within
// each plane, or column-major).
std::vector<at::Tensor> onnxMaxPoolWithIndices(const at::Tensor& x, const Ints& kernel, const Ints& strides,
                                               const Ints& padding, const Ints& dilation, bool ceilMode, bool columnMajor)
{
    auto [values, index] = at::max_pool2d_with_indices(x, kernel, strides, padding, dilation, ceilMode);
    const int64_t h = x.size(2), w = x.size(3);
    if (columnMajor)
        index = index % w * h + index.div(w, "floor");
    return {values, index + at::arange(x.size(0) * x.size(1), at::kLong).reshape({x.size(0), x.size(1), 1, 1}) * (h * w)};
}

// ONNX's MaxUnpool: x's values at their indices (over the whole tensor, as MaxPool's count) in
// zeros of the pooled input's shape, extended with zeros at the end of each spatial axis to
// output_shape where it is given.
at::Tensor onnxMaxUnpool(const at::Tensor& x, const at::Tensor& indices, const Ints& kernel, const Ints& strides,
                         const Ints& pads, const at::Tensor& outputShape = {})
{
    const size_t spatial = kernel.size();
    Ints shape{x.size(0), x.size(1)};
    for (size_t i = 0; i < spatial; ++i)
        shape.push_back((x.size(int64_t(i) + 2) - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial]);
    const int64_t total = std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
    at::Tensor y = at::zeros({total}, x.options()).index_copy_(0, indices.reshape({-1}), x.reshape({-1})).reshape(shape);
    if (!outputShape.defined())
        return y;
    const at::Tensor want = outputShape.to(at::kLong).contiguous();
    if (want.numel() != y.dim())
        throw std::runtime_error("MaxUnpool: output_shape has " + std::to_string(want.numel()) + " values for rank " +
                                 std::to_string(y.dim()));
    Ints pad;  // ATen's order: the last axis first
    for (int64_t i = y.dim(); i-- > 2;) {
        pad.push_back(0);
        pad.push_back(want.data_ptr<int64_t>()[i] - shape[size_t(i)]);
    }
    return at::constant_pad_nd(y, pad, 0.0);
}
