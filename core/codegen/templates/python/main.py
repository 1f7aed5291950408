import argparse
import ctypes
import os
import sys
import time

# Huge pages for the heap, as Ramiel's CLI runs (activations and packed weights span tens of
# megabytes; with 4 KiB pages the TLB misses show). glibc reads this tunable only when a process
# starts, so this script starts itself once more with it, added to a GLIBC_TUNABLES of your own
# (one that names glibc.malloc.hugetlb is left as it is).
_tunables = os.environ.get('GLIBC_TUNABLES', '')
if 'glibc.malloc.hugetlb' not in _tunables and sys.executable:
    os.environ['GLIBC_TUNABLES'] = (_tunables + ':' if _tunables else '') + 'glibc.malloc.hugetlb=1'
    try:
        os.execv(sys.executable, [sys.executable] + sys.argv)
    except OSError:
        pass  # runs as it is

import numpy as np
import torch

from model import RAMIEL_CLASS as Model, BOUND, INPUTS, OUTPUTS, THREADS, KERNEL_TRIAL_CALLS, kernel_trials_settled


def keep_freed_memory():
    """As Ramiel's runtime does: glibc keeps freed activations in the heap for the next run
    instead of mapping and unmapping every large tensor on every run (page faults each time),
    and the workers' threads use that one heap, not arenas of their own that glibc unmaps
    whenever they empty."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-8, 1)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass  # not glibc: its default stays


def input_files(specs):
    """Each graph input's .npy file or None: --input NAME=FILE.npy (as `ramiel run`; the
    others random), or --input FILE.npy once per graph input, in order."""
    names = [name for name, _, _ in INPUTS]
    files = [None] * len(INPUTS)
    positional = []
    for spec in specs:
        name, _, path = spec.partition('=')
        if path and name in names:
            files[names.index(name)] = path
        else:
            positional.append(spec)
    if positional:
        if len(positional) != len(INPUTS) or any(files):
            raise SystemExit('expected NAME=FILE.npy, or %d --input files (one per graph input, in order), got %s'
                             % (len(INPUTS), ' '.join(specs)))
        files = positional
    return files


def make_inputs(specs):
    inputs = []
    generator = torch.Generator().manual_seed(0)
    for (name, dtype, shape), path in zip(INPUTS, input_files(specs)):
        if path:
            try:
                t = torch.from_numpy(np.load(path, allow_pickle=False))
            except (OSError, ValueError) as e:
                raise SystemExit('%s: cannot read input %s: %s' % (path, name, e))
            if t.dtype != dtype:
                raise SystemExit('%s: input %s must have dtype %s, not %s' % (path, name, dtype, t.dtype))
        elif dtype.is_floating_point:
            t = torch.randn(shape, generator=generator, dtype=dtype)
        else:
            t = torch.zeros(shape, dtype=dtype)
        inputs.append(t.contiguous())
    return inputs


def as_list(outputs):
    return list(outputs) if isinstance(outputs, tuple) else [outputs]


def median_seconds(serial_run, parallel_run, runs):
    """Serial and parallel take turns of 3 timed runs, so that a change in the machine's load
    hits both; each turn starts with 0.1 s of untimed runs (at least one), because the first
    runs after the other find cold caches and sleeping threads and speed up over tens of
    milliseconds."""
    times = ([], [])
    for done in range(0, runs, 3):
        for fn, out in ((serial_run, times[0]), (parallel_run, times[1])):
            warm_until = time.perf_counter() + 0.1
            fn()
            while time.perf_counter() < warm_until:
                fn()
            for _ in range(min(3, runs - done)):
                start = time.perf_counter()
                fn()
                out.append(time.perf_counter() - start)
    return [sorted(t)[len(t) // 2] for t in times]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description='Run the generated model serially and in parallel, check, time.')
    ap.add_argument('--input', action='append', default=[], metavar='[NAME=]FILE.npy',
                    help='NAME=FILE.npy for a graph input (the others random), or FILE.npy once per graph '
                         'input, in order (default: seeded random data)')
    ap.add_argument('--save-outputs', metavar='DIR', help='write the parallel outputs as DIR/<name>.npy')
    ap.add_argument('--runs', type=int, default=10, help='timed runs of each (median reported)')
    ap.add_argument('--serial-threads', type=int, default=1, help='intra-op threads of the serial run')
    ap.add_argument('--weights', default=os.path.join(here, 'weights.bin'))
    args = ap.parse_args()

    keep_freed_memory()
    model = Model(args.weights)
    inputs = make_inputs(args.input)
    torch.set_num_threads(args.serial_threads)
    # A convolution's kernels take turns in its first calls (kernel trials): run both ways until
    # every trial has chosen, so that serial and parallel compute alike.
    for _ in range(KERNEL_TRIAL_CALLS):
        with torch.inference_mode():
            model(*inputs)
        model.forward_parallel(*inputs)
        if kernel_trials_settled():
            break
    with torch.inference_mode():
        expected = as_list(model(*inputs))
    got = as_list(model.forward_parallel(*inputs))
    agree = True
    for (name, _), a, b in zip(OUTPUTS, expected, got):
        # A NaN matches a NaN in the same place: a model may output some, serially and in parallel alike.
        both_nan = a.isnan() & b.isnan() if a.shape == b.shape else None
        same = a.shape == b.shape and torch.equal(a.masked_fill(both_nan, 0), b.masked_fill(both_nan, 0))
        ok = a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=1e-4, atol=1e-5, equal_nan=True)
        diff = 0.0
        if a.numel() and a.shape == b.shape:
            diff = (a.double() - b.double()).abs().masked_fill(both_nan, 0).max().item()
        agree = agree and ok
        print('output %s: shape %s, max |serial - parallel| %.3g %s' % (
            name, list(b.shape), diff, 'ok (equal)' if same else 'ok' if ok else 'MISMATCH'))

    def run_serial():
        with torch.inference_mode():
            model(*inputs)

    serial_s, parallel_s = median_seconds(run_serial, lambda: model.forward_parallel(*inputs), args.runs)
    print('serial   %.2f ms  (%d intra-op thread%s)' % (serial_s * 1e3, args.serial_threads, '' if args.serial_threads == 1 else 's'))
    print('parallel %.2f ms  (%d worker%s, threads %s)' % (parallel_s * 1e3, len(THREADS), '' if len(THREADS) == 1 else 's',
                                                           THREADS))
    print('speedup  %.2fx  (%s)' % (serial_s / parallel_s, 'bound %.2fx: the schedule\'s serial cost over max(critical path, '
                                     'work / workers)' % BOUND if BOUND else 'bound not known'))
    if args.save_outputs:
        os.makedirs(args.save_outputs, exist_ok=True)
        for (name, file), t in zip(OUTPUTS, got):
            np.save(os.path.join(args.save_outputs, file), t.contiguous().numpy())
    if not agree:
        print('serial and parallel outputs differ', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
