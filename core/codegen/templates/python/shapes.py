# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
import torch.nn.functional as F
# </check-only>
# Shapes and bounds computed when the model runs (a detector's, a dynamic sequence's), read as
# ONNX reads them.


def sizes_of(t):
    """A 1-D integer tensor's values as sizes."""
    return t.tolist()


def onnx_reshape(x, shape, allowzero):
    """ONNX's Reshape to a computed shape: -1 is inferred, 0 keeps x's size there (unless allowzero)."""
    sizes = shape.tolist()
    if not allowzero:
        sizes = [x.shape[i] if s == 0 else s for i, s in enumerate(sizes)]
    return torch.reshape(x, sizes)


def onnx_expand(x, shape):
    """ONNX's Expand to a computed shape: x and the shape broadcast both ways."""
    return x.expand(torch.broadcast_shapes(x.shape, tuple(shape.tolist()))).contiguous()


def onnx_slice(x, starts, ends, axes, steps):
    """ONNX's Slice with computed bounds (axes, steps: None for ONNX's defaults): negative bounds
    count from the end, then both are clamped into the axis; a negative step walks back."""
    starts, ends = starts.tolist(), ends.tolist()
    axes = axes.tolist() if axes is not None else list(range(len(starts)))
    steps = steps.tolist() if steps is not None else [1] * len(starts)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        size = x.shape[axis]
        start = start + size if start < 0 else start
        end = end + size if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), size), min(max(end, 0), size)
        else:
            start, end = min(max(start, 0), size - 1), min(max(end, -1), size - 1)
        x = torch.index_select(x, axis, torch.arange(start, end, step))
    return x


def onnx_range(start, limit, delta):
    """ONNX's Range: start, start + delta, ... up to limit, of start's type (floats as
    start + i * delta in double precision, as the runtime computes them)."""
    if not start.dtype.is_floating_point:
        return torch.arange(int(start), int(limit), int(delta)).to(start.dtype)
    count = int(torch.ceil(torch.tensor((float(limit) - float(start)) / float(delta), dtype=torch.float64)))
    return (torch.arange(max(count, 0), dtype=torch.float64) * float(delta) + float(start)).to(start.dtype)


def onnx_squeeze(x, axes, unsqueeze):
    """Squeeze or Unsqueeze at computed axes (ONNX counts a negative one from the end of the
    input, for Unsqueeze of the output); Squeeze without axes drops every axis of size 1."""
    axes = axes.tolist()
    if not axes and not unsqueeze:
        return x.squeeze()
    rank = x.dim() + (len(axes) if unsqueeze else 0)
    axes = sorted(a + rank if a < 0 else a for a in axes)
    for a in (axes if unsqueeze else reversed(axes)):  # squeezed: later axes first
        x = x.unsqueeze(a) if unsqueeze else x.squeeze(a)
    return x


def onnx_reduce_sum(x, axes, keepdims, noop_with_empty_axes):
    """ReduceSum over computed axes; none: every axis, or none at all with noop_with_empty_axes."""
    axes = axes.tolist()
    if not axes:
        if noop_with_empty_axes:
            return x
        axes = list(range(x.dim()))
    return torch.sum(x, dim=axes, keepdim=keepdims)


def onnx_cumsum(x, axis, exclusive, reverse):
    """CumSum along a computed axis (a tensor of one value, counted from the end where negative):
    from the end where `reverse`, each sum without its own element where `exclusive`."""
    axis = int(axis)
    axis = axis + x.dim() if axis < 0 else axis
    y = torch.cumsum(x.flip([axis]) if reverse else x, dim=axis, dtype=x.dtype)
    if exclusive and x.shape[axis] > 0:
        y = torch.cat([torch.zeros_like(y.narrow(axis, 0, 1)), y.narrow(axis, 0, x.shape[axis] - 1)], dim=axis)
    return y.flip([axis]) if reverse else y


def onnx_pad(x, pads, axes, mode, value=None):
    """ONNX's Pad with computed pads: the begins, then the ends, of the axes `axes` names (every
    axis where None); negative pads remove values. Mode 'constant' pads with value (a scalar
    tensor, else 0); 'reflect' and 'edge' gather each padded axis at reflected or clamped indices."""
    rank, pads = x.dim(), pads.tolist()
    axes = [a % rank for a in axes.tolist()] if axes is not None else list(range(rank))
    if mode == 'constant':
        spec = [0] * (2 * rank)  # F.pad's order: the last axis first
        for i, a in enumerate(axes):
            spec[2 * (rank - 1 - a)], spec[2 * (rank - 1 - a) + 1] = pads[i], pads[len(axes) + i]
        return F.pad(x, spec, value=float(value) if value is not None and value.numel() else 0.0)
    for i, a in enumerate(axes):
        last = x.shape[a] - 1
        index = torch.arange(-pads[i], last + 1 + pads[len(axes) + i])
        index = index.clamp(0, last) if mode == 'edge' else last - (last - index.abs()).abs()
        x = x.index_select(a, index)
    return x
