# <check-only> What the rest of model.py defines, so that this file lints on its own.
import torch
# </check-only>
# ONNX's Loop: the body, a function of its own, runs as many times as the trip count and its
# condition say.


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
