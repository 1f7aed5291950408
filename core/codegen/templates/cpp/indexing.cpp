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
    const at::Tensor i = fromStart(indices, x.size(axis));
    Ints shape(x.sizes().begin(), x.sizes().begin() + axis);
    shape.insert(shape.end(), i.sizes().begin(), i.sizes().end());
    shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
    return at::index_select(x, axis, i.reshape({-1})).reshape(shape);
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

// ONNX's TopK: the k largest (or smallest) values along `axis`, sorted, and their indices.
// A stable sort, since at::topk orders equal values as it likes.
std::vector<at::Tensor> onnxTopK(const at::Tensor& x, int64_t k, int64_t axis, bool largest)
{
    const auto [values, indices] = at::sort(x, /*stable=*/true, axis, /*descending=*/largest);
    return {values.narrow(axis, 0, k), indices.narrow(axis, 0, k)};
}
