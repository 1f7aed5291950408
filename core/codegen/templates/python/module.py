# <check-only> What the rest of model.py defines, so that this file lints on its own.
import concurrent.futures
import torch
from slots import Aborted, Slot
from weights import load_weights
WEIGHTS_FILE = ''
THREADS = []
SLOTS = 0
RAMIEL_METHODS = None  # placeholder: forward(), forward_parallel(), one method per worker, the outputs
# </check-only>
class RAMIEL_CLASS(torch.nn.Module):
    """The model with its weights as buffers (from the weights file, no pickle).

    forward() runs every node serially; forward_parallel() runs the schedule: worker k
    runs _worker_k with THREADS[k] intra-op threads, worker 0 on the calling thread when
    that thread has THREADS[0] threads (it saves a hand-off each run), the others on
    threads of their own. PyTorch releases the GIL inside its operators, so the workers
    compute side by side.
    """

    def __init__(self, weights_file=WEIGHTS_FILE):
        super().__init__()
        for name, tensor in load_weights(weights_file):
            self.register_buffer(name, tensor)
        self.eval()
        self._pool = None  # the workers' threads, started by the first forward_parallel()

    def _run_schedule(self, inputs):
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(THREADS), thread_name_prefix='worker')
        slots = [Slot() for _ in range(SLOTS)]
        workers = [getattr(self, '_worker_%d' % k) for k in range(len(THREADS))]
        first = 1 if torch.get_num_threads() == THREADS[0] else 0  # worker 0 on this thread
        futures = [self._pool.submit(_run_worker, workers[k], THREADS[k], inputs, slots) for k in range(first, len(THREADS))]
        errors = []
        if first:
            try:
                _run_worker(workers[0], THREADS[0], inputs, slots)
            except BaseException as e:
                errors.append(e)
        errors += [f.exception() for f in futures]
        for e in errors:
            if e is not None and not isinstance(e, Aborted):
                raise e
        return self._outputs(inputs, slots)

    RAMIEL_METHODS


def _run_worker(work, threads, inputs, slots):
    # Per thread, and only when it differs: get_num_threads() first makes ATen set
    # this thread up (which would otherwise overwrite the count at its first
    # parallel operator); set_num_threads() also rebuilds a process-wide pool.
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    try:
        with torch.inference_mode():
            work(inputs, slots)
    except BaseException:
        for slot in slots:
            slot.abort()
        raise
