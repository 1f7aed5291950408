# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
import torch.nn.functional as F
# </check-only>
# ONNX's indexing operators where their indices are computed when the model runs: ONNX counts
# negative indices from the end, and TopK puts the lower index first among equal values. And the
# operators whose outputs are indices or selections: Compress, Unique, MaxPool's indices, MaxUnpool.
SCATTER_REDUCTIONS = {'mul': 'prod', 'max': 'amax', 'min': 'amin'}


def from_start(indices, size):
    """Indices in [-size, size) counted from the start."""
    return torch.where(indices < 0, indices + size, indices)


def onnx_gather(x, axis, indices):
    """ONNX's Gather: x's entries along `axis` at `indices`, whose shape replaces that axis."""
    axis = axis % x.dim()
    indices = from_start(indices, x.shape[axis])
    y = torch.index_select(x, axis, indices.reshape(-1))
    return y.reshape(x.shape[:axis] + indices.shape + x.shape[axis + 1:])


def linear_index(indices, shape):
    """The flat position among the first indices.shape[-1] axes of `shape` that each row of
    indices' last axis addresses."""
    linear = torch.zeros(indices.shape[:-1], dtype=torch.int64)
    for j in range(indices.shape[-1]):
        linear = linear * shape[j] + from_start(indices[..., j].long(), shape[j])
    return linear


def onnx_gather_nd(data, indices, batch_dims):
    """ONNX's GatherND: the slices of data that the last axis of indices addresses, the first
    batch_dims axes of both shared."""
    k = indices.shape[-1]
    linear = linear_index(indices, data.shape[batch_dims:])
    batch = int(torch.tensor(data.shape[:batch_dims], dtype=torch.int64).prod())
    positions = int(torch.tensor(data.shape[batch_dims:batch_dims + k], dtype=torch.int64).prod())
    rest = list(data.shape[batch_dims + k:])
    offsets = (torch.arange(batch) * positions).reshape(batch, -1)
    rows = (linear.reshape(batch, -1) + offsets).reshape(-1)
    return data.reshape([batch * positions] + rest).index_select(0, rows).reshape(list(indices.shape[:-1]) + rest)


def onnx_gather_elements(x, axis, indices):
    """ONNX's GatherElements: x's entries along `axis` at indices of x's rank."""
    return torch.gather(x, axis, from_start(indices, x.shape[axis]).long())


def onnx_scatter_elements(data, axis, indices, updates, reduction):
    """ONNX's ScatterElements: data with updates written at indices along `axis`, or combined
    with what is there by `reduction` ('add', 'mul', 'max', 'min')."""
    indices = from_start(indices, data.shape[axis]).long()
    if reduction == 'none':
        return torch.scatter(data, axis, indices, updates)
    if reduction == 'add':
        return torch.scatter_add(data, axis, indices, updates)
    return torch.scatter_reduce(data, axis, indices, updates, SCATTER_REDUCTIONS[reduction])


def onnx_scatter_nd(data, indices, updates, reduction):
    """ONNX's ScatterND: data with the slices that the last axis of indices addresses replaced
    by updates, or combined with them by `reduction` ('add', 'mul', 'max', 'min')."""
    rest = list(data.shape[indices.shape[-1]:])
    y = data.clone().reshape([-1] + rest)
    rows = linear_index(indices, data.shape).reshape(-1)
    parts = updates.to(data.dtype).reshape([-1] + rest)
    if reduction == 'none':
        y.index_copy_(0, rows, parts)
    elif reduction == 'add':
        y.index_add_(0, rows, parts)
    else:
        y.index_reduce_(0, rows, parts, SCATTER_REDUCTIONS[reduction], include_self=True)
    return y.reshape(data.shape)


def onnx_one_hot(indices, depth, values, axis):
    """ONNX's OneHot: values[1] where an index (negative ones counted from the end) meets its
    position along a new axis of `depth` entries, values[0] elsewhere."""
    depth = int(depth)
    hot = from_start(indices.double().floor().long(), depth).unsqueeze(-1) == torch.arange(depth)
    values = values.reshape(2)
    return torch.where(hot, values[1], values[0]).movedim(-1, axis).contiguous()


def onnx_topk(x, k, axis, largest):
    """ONNX's TopK: the k largest (or smallest) values along `axis`, sorted, and their indices.
    A stable sort, since torch.topk orders equal values as it likes. k: a number or a tensor of one."""
    k = int(k)
    values, indices = torch.sort(x, dim=axis, descending=largest, stable=True)
    return values.narrow(axis, 0, k), indices.narrow(axis, 0, k)


def onnx_trilu(x, k, upper):
    """ONNX's Trilu with k computed (a tensor of one value): the upper or lower triangle from
    diagonal k, clamped to the matrix (ATen refuses a k far beyond it)."""
    limit = x.shape[-1] + x.shape[-2] + 1
    k = max(-limit, min(limit, int(k)))
    return torch.triu(x, k) if upper else torch.tril(x, k)



def onnx_resize_source(n, size, scale, length, mode):
    """Where each of `size` outputs along an axis of n reads the input (ONNX's
    coordinate_transformation_mode `mode`; length: the output's unrounded length, n * scale
    where scales were given; for tf_crop_and_resize, scale and length are roi's start and end on
    the axis, fractions of its last index), in double."""
    o = torch.arange(size, dtype=torch.float64)
    if mode == 'tf_crop_and_resize':  # beyond two of the input's ends only the side matters
        start, end = scale, length
        if size == 1:
            return torch.full((1,), 0.5 * (start + end) * (n - 1), dtype=torch.float64).clamp(-2, n + 1)
        return (start * (n - 1) + o * (end - start) * (n - 1) / (size - 1)).clamp(-2, n + 1)
    if mode == 'asymmetric':
        return o / scale
    if mode == 'align_corners':
        return o * (n - 1) / (length - 1) if length != 1 else torch.zeros_like(o)
    if mode == 'tf_half_pixel_for_nn':
        return (o + 0.5) / scale
    if mode == 'pytorch_half_pixel' and length <= 1:
        return torch.zeros_like(o)
    return (o + 0.5) / scale - 0.5  # half_pixel, pytorch_half_pixel


def onnx_resize_nearest(x, axis, size, scale, length, mode, nearest):
    """ONNX's nearest Resize along one axis: each output takes the input at its source
    coordinate rounded as `nearest` says (floor, ceil, round_prefer_floor, round_prefer_ceil:
    which way halves go), clamped to the axis."""
    n = x.shape[axis]
    src = onnx_resize_source(n, size, scale, length, mode)
    if nearest == 'floor':
        index = src.floor()
    elif nearest == 'ceil':
        index = src.ceil()
    else:
        half = src - src.floor() == 0.5
        index = torch.where(half, src.floor() + (1 if nearest == 'round_prefer_ceil' else 0), torch.round(src))
    return x.index_select(axis, index.long().clamp(0, n - 1))


def onnx_resize_linear(x, axis, size, scale, length, mode):
    """ONNX's linear Resize along one axis, in a coordinate mode F.interpolate lacks: output o
    reads the input at its source coordinate, clamped to the axis, between its two neighbours."""
    n = x.shape[axis]
    src = onnx_resize_source(n, size, scale, length, mode).clamp(0, n - 1)
    lo = src.floor().long()
    hi = (lo + 1).clamp(max=n - 1)
    shape = [1] * x.dim()
    shape[axis] = size
    w = (src - lo).float().to(x.dtype).reshape(shape)
    a = x.index_select(axis, lo)
    return a + (x.index_select(axis, hi) - a) * w


def onnx_resize_cubic(x, axis, size, scale, length, mode, a, exclude_outside):
    """ONNX's cubic Resize along one axis: four taps around each source coordinate weighted by
    Keys' kernel with coefficient a, edge values outside the axis (with exclude_outside, those
    taps' weights dropped and the others renormalized), summed in double."""
    n = x.shape[axis]
    src = onnx_resize_source(n, size, scale, length, mode)
    taps = [src.floor() + k - 1 for k in range(4)]

    def keys(d):
        d = d.abs()
        near = ((a + 2) * d - (a + 3)) * d * d + 1
        far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return torch.where(d <= 1, near, torch.where(d < 2, far, torch.zeros_like(d)))

    weights = [keys(src - t) for t in taps]
    if exclude_outside:
        weights = [torch.where((t < 0) | (t >= n), torch.zeros_like(w), w) for t, w in zip(taps, weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [torch.where(total != 0, w / total, w) for w in weights]
    shape = [1] * x.dim()
    shape[axis] = size
    xd = x.double()
    y = 0
    for t, w in zip(taps, weights):
        y = y + xd.index_select(axis, t.long().clamp(0, n - 1)) * w.float().double().reshape(shape)
    return y.to(x.dtype)


def onnx_resize(x, scales, sizes, mode, coordinates, nearest, cubic_a, exclude_outside, roi=None, extrapolation=0.0):
    """ONNX's Resize with scales or sizes computed when the model runs (one of them None), or in
    the tf_crop_and_resize mode: each axis whose size, scale or region changes, in turn, through
    the helpers above (sizes: the output's, each axis's scale out / in; scales: each output size
    floor(in * scale)). tf_crop_and_resize spans roi's part of each axis (its starts, then its
    ends; the whole axis without a roi), and an output whose source lies outside the input on any
    axis is `extrapolation`, set last."""
    n = x.dim()
    if sizes is not None and sizes.numel() > 0:
        out = [int(v) for v in sizes.tolist()]
        scale = [o / i if i else 1.0 for o, i in zip(out, x.shape)]
        length = [float(o) for o in out]
    else:
        scale = [float(v) for v in scales.tolist()]
        out = [int(i * s) for i, s in zip(x.shape, scale)]  # floor: scales are positive
        length = [i * s for i, s in zip(x.shape, scale)]
    if len(out) != n:
        raise ValueError(f'Resize: {len(out)} sizes or scales for an input of rank {n}')
    crop = coordinates == 'tf_crop_and_resize'
    region = roi.double().tolist() if crop and roi is not None and roi.numel() > 0 else [0.0] * n + [1.0] * n
    if len(region) != 2 * n:
        raise ValueError(f'Resize: roi has {len(region)} values for an input of rank {n}')
    outside = []
    for axis in range(n):
        if x.shape[axis] == out[axis] and scale[axis] == 1.0 and (region[axis], region[axis + n]) == (0.0, 1.0):
            continue
        if crop:
            src = onnx_resize_source(x.shape[axis], out[axis], region[axis], region[axis + n], coordinates)
            outside.append((axis, torch.nonzero((src < 0) | (src > x.shape[axis] - 1)).reshape(-1)))
        args = (x, axis, out[axis], region[axis] if crop else scale[axis], region[axis + n] if crop else length[axis],
                coordinates)
        if mode == 'nearest':
            x = onnx_resize_nearest(*args, nearest)
        elif mode == 'cubic':
            x = onnx_resize_cubic(*args, cubic_a, exclude_outside)
        else:
            x = onnx_resize_linear(*args)
    for axis, index in outside:
        x = x.index_fill(axis, index, extrapolation)
    return x


def onnx_compress(x, condition, axis):
    """ONNX's Compress: the slices of x along axis (of x flattened where axis is None) whose
    condition is true; the condition may be shorter than the axis."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    return x.index_select(axis, torch.nonzero(condition).reshape(-1))


def onnx_unique(x, axis, sorted):
    """ONNX's Unique: the distinct values (slices along axis; of x flattened where None), sorted or
    in the order they first appear, with the index of each one's first appearance, each element's
    (slice's) index among them, and how often each appears."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    y, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True, dim=axis)
    n = x.shape[axis]
    first = torch.full((counts.numel(),), n).scatter_reduce(0, inverse, torch.arange(n), 'amin')
    if sorted:
        return [y, first, inverse, counts]
    order = torch.argsort(first)  # the distinct values by first appearance
    rank = torch.empty_like(order).scatter_(0, order, torch.arange(order.numel()))
    return [y.index_select(axis, order), first[order], rank[inverse], counts[order]]


def onnx_max_pool_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode, column_major):
    """2-D MaxPool's values and ONNX's indices, which count over the whole tensor (row-major
    within each plane, or column-major)."""
    values, index = F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)
    h, w = x.shape[2], x.shape[3]
    if column_major:
        index = index % w * h + torch.div(index, w, rounding_mode='floor')
    return [values, index + torch.arange(x.shape[0] * x.shape[1]).reshape(x.shape[0], x.shape[1], 1, 1) * (h * w)]


def onnx_max_unpool(x, indices, kernel, strides, pads, output_shape=None):
    """ONNX's MaxUnpool: x's values at their indices (over the whole tensor, as MaxPool's count) in
    zeros of the pooled input's shape, extended with zeros at the end of each spatial axis to
    output_shape where it is given."""
    spatial = len(kernel)
    shape = list(x.shape[:2]) + [(x.shape[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial]
                                 for i in range(spatial)]
    y = x.new_zeros(torch.Size(shape).numel()).index_copy(0, indices.reshape(-1), x.reshape(-1)).reshape(shape)
    if output_shape is None:
        return y
    want = output_shape.tolist()
    return F.pad(y, [p for i in reversed(range(2, y.dim())) for p in (0, want[i] - shape[i])])
