#!/usr/bin/env python3
# Why generated Python uses threads with events (docs/codegen.md): usage
#   /usr/bin/python3 bench/fork_vs_threads.py
# Two independent branches (googlenet-like convolution chains), run serially, on two
# threads with events, and with torch.jit.fork in a scripted function; medians.
import concurrent.futures
import time

import torch
torch.manual_seed(0)
def chain_weights():
    return [torch.randn(64, 64, 3, 3).contiguous(memory_format=torch.channels_last) for _ in range(6)]
WA, WB = chain_weights(), chain_weights()
x = torch.randn(1, 64, 28, 28)

def chain(x: torch.Tensor, ws: list[torch.Tensor]) -> torch.Tensor:
    for w in ws:
        x = torch.relu(torch.conv2d(x, w, None, [1, 1], [1, 1]))
    return x

@torch.jit.script
def forked(x: torch.Tensor, wa: list[torch.Tensor], wb: list[torch.Tensor]) -> torch.Tensor:
    fut = torch.jit.fork(chain, x, wb)
    a = chain(x, wa)
    b = torch.jit.wait(fut)
    return torch.cat([a, b], 1)

def serial():
    return torch.cat([chain(x, WA), chain(x, WB)], 1)

pool = concurrent.futures.ThreadPoolExecutor(2, initializer=lambda: torch.set_num_threads(1))
def threads():
    fa = pool.submit(chain, x, WA); fb = pool.submit(chain, x, WB)
    return torch.cat([fa.result(), fb.result()], 1)

def med(fn, runs=30):
    for _ in range(3): fn()
    t = []
    for _ in range(runs):
        s = time.perf_counter(); fn(); t.append(time.perf_counter() - s)
    return sorted(t)[runs // 2] * 1e3

torch.set_num_threads(1)
torch.set_num_interop_threads(2)
with torch.inference_mode():
    ref = serial()
    assert torch.allclose(ref, threads()) and torch.allclose(ref, forked(x, WA, WB))
    print('serial 1 thread      %.2f ms' % med(serial))
    print('threads + events     %.2f ms' % med(threads))
    print('jit.fork (scripted)  %.2f ms' % med(lambda: forked(x, WA, WB)))
