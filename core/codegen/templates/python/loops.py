# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
# </check-only>
# ONNX's Loop and Scan: the body, a function of its own, runs as many times as the trip count
# and its condition say, or once per slice of the scan inputs.


def onnx_loop(body, trips, condition, carried, outer, scan_types):
    """body(iteration, condition, *carried, *outer) gives [condition, *carried, *scan values]; it
    runs while the iteration is below trips and the condition holds (None where the node leaves
    either out; without a condition the body's is ignored). Gives the last carried values, then
    each scan output's values stacked (empty, of its type, where the body never ran)."""
    limit = int(trips) if trips is not None else None
    keep = bool(condition) if condition is not None else True
    scans = [[] for _ in scan_types]
    iteration = 0
    while (limit is None or iteration < limit) and keep:
        out = body(torch.tensor(iteration), torch.tensor(keep), *carried, *outer)
        if condition is not None:
            keep = bool(out[0])
        carried = out[1:1 + len(carried)]
        for values, value in zip(scans, out[1 + len(carried):]):
            values.append(value)
        iteration += 1
    return [*carried, *[torch.stack(v) if v else torch.empty(0, dtype=t) for v, t in zip(scans, scan_types)]]


def stacked(values, axis, reverse, dtype):
    """A scan output's values stacked along axis (in reverse order where asked); empty, of its
    type, where there are none."""
    if not values:
        return torch.empty(0, dtype=dtype)
    return torch.stack(values[::-1] if reverse else values, axis)


def onnx_scan(body, states, inputs, outer, in_axes, in_reverse, out_axes, out_reverse, scan_types):
    """ONNX's Scan: body(*states, *slices, *outer) gives [*states, *scan values] for each slice of
    the scan inputs along their axes (from the last where reversed). Gives the last states, then
    each scan output's values stacked along its axis (reversed where asked)."""
    axes = [a % x.dim() for a, x in zip(in_axes, inputs)]
    length = inputs[0].shape[axes[0]]
    if any(x.shape[a] != length for x, a in zip(inputs, axes)):
        raise ValueError('Scan: the scan inputs have different lengths along their axes')
    scans = [[] for _ in scan_types]
    for t in range(length):
        out = body(*states, *[x.select(a, length - 1 - t if r else t) for x, a, r in zip(inputs, axes, in_reverse)],
                   *outer)
        states = out[:len(states)]
        for values, value in zip(scans, out[len(states):]):
            values.append(value)
    return [*states, *[stacked(v, a, r, t) for v, a, r, t in zip(scans, out_axes, out_reverse, scan_types)]]


def onnx_scan_batched(body, sequence_lens, states, inputs, outer, in_reverse, scan_types):
    """Scan before opset 9: every input and output has a batch axis first, and onnx_scan runs once
    per batch entry over axis 0 of the rest; sequences shorter than the input are refused."""
    if sequence_lens is not None and any(int(n) != inputs[0].shape[1] for n in sequence_lens.tolist()):
        raise ValueError('Scan: sequence_lens shorter than the sequence are not supported')
    zeros = [0] * len(scan_types)
    rows = [onnx_scan(body, [s[i] for s in states], [x[i] for x in inputs], outer, [0] * len(inputs), in_reverse,
                      zeros, zeros, scan_types) for i in range(inputs[0].shape[0])]
    return [torch.stack(parts) for parts in zip(*rows)]
