#!/usr/bin/python3
"""Runs generated Python models on stored inputs and compares with stored outputs.

Usage: check_generated.py MANIFEST
MANIFEST: one case a line, tab-separated: its name, the folder `ramiel export --lang python`
wrote, then its inputs' .npy files (the generated model's inputs, in order) and its expected
outputs' .npy files, the two lists separated by a lone '--' field.
Prints one line a case: 'NAME ok' or 'NAME FAIL what differs', and exits 0 when all ran.
Each model runs forward() (serial) and forward_parallel() (its schedule); both must match.
"""
import importlib.util
import sys

import numpy as np
import torch


def model_class(folder, index):
    spec = importlib.util.spec_from_file_location('generated_%d' % index, folder + '/model.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and hasattr(value, 'forward_parallel'):
            return value, module
    raise RuntimeError('model.py defines no model class')


def difference(got, want, rtol=1e-3, atol=1e-5):
    """Empty when equal: within rtol/atol for floats, exactly for the rest; NaN only NaN."""
    if tuple(got.shape) != tuple(want.shape):
        return 'shape %s, expected %s' % (list(got.shape), list(want.shape))
    if got.dtype != want.dtype:
        return 'type %s, expected %s' % (got.dtype, want.dtype)
    a, b = got.reshape(-1), want.reshape(-1)
    if want.dtype in (torch.float32, torch.float64):
        nan = torch.isnan(a) & torch.isnan(b)
        infinite = torch.isinf(a) | torch.isinf(b)
        close = (a - b).abs() <= atol + rtol * b.abs()
        bad = ~(nan | torch.where(infinite, a == b, close))
    else:
        bad = a != b
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        return 'element %d: %r, expected %r' % (i, a[i].item(), b[i].item())
    return ''


def check(index, fields):
    folder, rest = fields[1], fields[2:]
    split = rest.index('--')
    inputs = [torch.from_numpy(np.load(f, allow_pickle=False)) for f in rest[:split]]
    expected = [torch.from_numpy(np.load(f, allow_pickle=False)) for f in rest[split + 1:]]
    cls, module = model_class(folder, index)
    net = cls(folder + '/weights.bin')
    given = inputs[:len(module.INPUTS)]
    for how, run in (('forward', net.forward), ('forward_parallel', net.forward_parallel)):
        outputs = run(*given)
        outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
        if len(outputs) != len(expected):
            return '%s gave %d outputs, expected %d' % (how, len(outputs), len(expected))
        for k, (got, want) in enumerate(zip(outputs, expected)):
            problem = difference(got, want)
            if problem:
                return '%s output %d: %s' % (how, k, problem)
    return ''


def main():
    with open(sys.argv[1]) as f:
        cases = [line.rstrip('\n').split('\t') for line in f if line.strip()]
    for index, fields in enumerate(cases):
        try:
            problem = check(index, fields)
        except Exception as e:  # a case's failure is its line, the others still run
            problem = '%s: %s' % (type(e).__name__, str(e).replace('\n', ' ')[:300])
        print('%s %s' % (fields[0], 'FAIL ' + problem if problem else 'ok'), flush=True)


if __name__ == '__main__':
    main()
