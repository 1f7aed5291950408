# <check-only> What the rest of run.py defines, so that this file lints on its own.
import torch
from slots import Aborted, Slot
CLUSTERS = []
THREADS = []
SLOTS = 0
RAMIEL_OUTPUTS = None  # placeholder: the graph outputs, one line each
# </check-only>
def _work(cluster, threads, w, inputs, slots):
    # Per thread, and only when it differs: get_num_threads() first makes ATen set
    # this thread up (which would otherwise overwrite the count at its first
    # parallel operator), and setting the count on every run costs time.
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            cluster(w, inputs, slots)
    except BaseException:
        for slot in slots:
            slot.abort()
        raise


def parallel(w, inputs, pool):
    """One worker thread per cluster (torch releases the GIL inside its operators)."""
    slots = [Slot() for _ in range(SLOTS)]
    futures = [pool.submit(_work, c, n, w, inputs, slots) for c, n in zip(CLUSTERS, THREADS)]
    errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None and not isinstance(e, Aborted):
            raise e
    return [
        RAMIEL_OUTPUTS
    ]
