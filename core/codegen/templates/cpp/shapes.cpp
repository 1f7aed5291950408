// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// Shapes and bounds computed when the model runs (a detector's, a dynamic sequence's), read as
// ONNX reads them.

// A 1-D integer tensor's values as sizes.
Ints sizesOf(const at::Tensor& t)
{
    const at::Tensor values = t.to(at::kLong).contiguous();
    return Ints(values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + values.numel());
}

// ONNX's Reshape to a computed shape: -1 is inferred, 0 keeps x's size there (unless allowzero).
at::Tensor onnxReshape(const at::Tensor& x, const at::Tensor& shape, bool allowzero)
{
    Ints sizes = sizesOf(shape);
    for (size_t i = 0; i < sizes.size() && !allowzero; ++i)
        if (sizes[i] == 0)
            sizes[i] = x.size(int64_t(i));
    return at::reshape(x, sizes);
}

// ONNX's Expand to a computed shape: x and the shape broadcast both ways.
at::Tensor onnxExpand(const at::Tensor& x, const at::Tensor& shape)
{
    return x.expand(at::infer_size(x.sizes(), sizesOf(shape))).contiguous();
}

// ONNX's Slice with computed bounds (axes, steps: undefined for ONNX's defaults): negative bounds
// count from the end, then both are clamped into the axis; a negative step walks back.
at::Tensor onnxSlice(at::Tensor x, const at::Tensor& starts, const at::Tensor& ends, const at::Tensor& axes = {},
                     const at::Tensor& steps = {})
{
    const Ints first = sizesOf(starts), last = sizesOf(ends);
    Ints dims = axes.defined() ? sizesOf(axes) : Ints(), step = steps.defined() ? sizesOf(steps) : Ints(first.size(), 1);
    for (size_t i = 0; dims.size() < first.size(); ++i)
        dims.push_back(int64_t(i));
    for (size_t i = 0; i < first.size(); ++i) {
        const int64_t size = x.size(dims[i]);
        int64_t start = first[i] < 0 ? first[i] + size : first[i], end = last[i] < 0 ? last[i] + size : last[i];
        if (step[i] > 0) {
            start = std::clamp<int64_t>(start, 0, size);
            end = std::clamp<int64_t>(end, 0, size);
        } else {
            start = std::clamp<int64_t>(start, 0, size - 1);
            end = std::clamp<int64_t>(end, -1, size - 1);
        }
        x = at::index_select(x, dims[i], at::arange(start, end, step[i], at::kLong));
    }
    return x;
}

// ONNX's Range: start, start + delta, ... up to limit, of start's type (floats as start + i * delta
// in double precision, as the runtime computes them).
at::Tensor onnxRange(const at::Tensor& start, const at::Tensor& limit, const at::Tensor& delta)
{
    if (!at::isFloatingType(start.scalar_type()))
        return at::arange(start.item<int64_t>(), limit.item<int64_t>(), delta.item<int64_t>(), at::kLong).to(start.scalar_type());
    const double s = start.item<double>(), d = delta.item<double>();
    const int64_t count = int64_t(std::ceil((limit.item<double>() - s) / d));
    return (at::arange(std::max<int64_t>(count, 0), at::kDouble) * d + s).to(start.scalar_type());
}

// Squeeze or Unsqueeze at computed axes (ONNX counts a negative one from the end of the input,
// for Unsqueeze of the output); Squeeze without axes drops every axis of size 1.
at::Tensor onnxSqueeze(const at::Tensor& x, const at::Tensor& axesTensor, bool unsqueeze)
{
    Ints axes = sizesOf(axesTensor);
    if (axes.empty() && !unsqueeze)
        return x.squeeze();
    const int64_t rank = x.dim() + (unsqueeze ? int64_t(axes.size()) : 0);
    for (int64_t& a : axes)
        a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    at::Tensor y = x;
    if (unsqueeze)
        for (int64_t a : axes)
            y = y.unsqueeze(a);
    else
        for (auto a = axes.rbegin(); a != axes.rend(); ++a)  // later axes first
            y = y.squeeze(*a);
    return y;
}

// ReduceSum over computed axes; none: every axis, or none at all with noop_with_empty_axes.
at::Tensor onnxReduceSum(const at::Tensor& x, const at::Tensor& axesTensor, bool keepdims, bool noopWithEmptyAxes)
{
    Ints axes = sizesOf(axesTensor);
    if (axes.empty()) {
        if (noopWithEmptyAxes)
            return x;
        for (int64_t i = 0; i < x.dim(); ++i)
            axes.push_back(i);
    }
    return at::sum(x, axes, keepdims);
}

// CumSum along a computed axis (a tensor of one value, counted from the end where negative): from
// the end where `reverse`, each sum without its own element where `exclusive`.
at::Tensor onnxCumSum(const at::Tensor& x, const at::Tensor& axisTensor, bool exclusive, bool reverse)
{
    int64_t axis = axisTensor.item<int64_t>();
    axis = axis < 0 ? axis + x.dim() : axis;
    at::Tensor y = at::cumsum(reverse ? x.flip({axis}) : x, axis, x.scalar_type());
    if (exclusive && x.size(axis) > 0)
        y = at::cat({at::zeros_like(y.narrow(axis, 0, 1)), y.narrow(axis, 0, x.size(axis) - 1)}, axis);
    return reverse ? y.flip({axis}) : y;
}

// ONNX's Pad with computed pads: the begins, then the ends, of the axes `axes` names (every axis
// where undefined); negative pads remove values. Mode "constant" pads with value (a scalar
// tensor, else 0); "reflect" and "edge" gather each padded axis at reflected or clamped indices.
at::Tensor onnxPad(at::Tensor x, const at::Tensor& pads, const at::Tensor& axesTensor, const std::string& mode,
                   const at::Tensor& value = {})
{
    const int64_t rank = x.dim();
    const Ints given = sizesOf(pads);
    Ints axes = axesTensor.defined() ? sizesOf(axesTensor) : Ints();
    for (int64_t a = 0; !axesTensor.defined() && a < rank; ++a)
        axes.push_back(a);
    for (int64_t& a : axes)
        a = a < 0 ? a + rank : a;
    if (mode == "constant") {
        Ints spec(size_t(2 * rank), 0);  // ATen's order: the last axis first
        for (size_t i = 0; i < axes.size(); ++i) {
            spec[size_t(2 * (rank - 1 - axes[i]))] = given.at(i);
            spec[size_t(2 * (rank - 1 - axes[i]) + 1)] = given.at(axes.size() + i);
        }
        return at::constant_pad_nd(x, spec, value.defined() && value.numel() ? value.item<double>() : 0.0);
    }
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t last = x.size(axes[i]) - 1;
        at::Tensor index = at::arange(-given.at(i), last + 1 + given.at(axes.size() + i), at::kLong);
        index = mode == "edge" ? index.clamp(0, last) : last - (last - index.abs()).abs();
        x = x.index_select(axes[i], index);
    }
    return x;
}
