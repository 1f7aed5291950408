#!/usr/bin/env python3
"""One ONNX Runtime configuration serving timed runs in turns: bench/ort_worker.js for a
host with Python's onnxruntime and no Node.js (the 16-core machine of docs/performance.md),
with the same protocol and session options: "ready" once the session is made; "warm K":
K untimed runs, answered "warm"; "run K": untimed runs for 0.1 s (at least one), then K
timed ones, answered "times t1 ... tK" in seconds; "quit" or the end of its input ends it.
Sequential execution, all graph optimizations, one session; the first input random floats of
the sizes given, or the data of a .npy file (a detector's image).
Usage: python3 bench/ort_worker.py MODEL.onnx 1,3,224,224|INPUT.npy THREADS
"""
import sys
import time

import numpy as np
import onnxruntime as ort


def first_input(text):
    """A .npy file's data, or random floats of the sizes given ("1,3,224,224")."""
    if text.endswith('.npy'):
        return np.load(text)
    return np.random.rand(*[int(d) for d in text.split(',')]).astype(np.float32)


def main():
    model, dims_text, threads = sys.argv[1:4]
    options = ort.SessionOptions()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = int(threads)
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: no warning per run on the table
    try:
        session = ort.InferenceSession(model, options, providers=['CPUExecutionProvider'])
    except Exception as e:  # one line naming the file, as the Node.js worker does
        sys.exit('ort_worker: %s: %s' % (model, (str(e).splitlines() or [type(e).__name__])[0]))
    feeds = {session.get_inputs()[0].name: first_input(dims_text)}
    print('ready', flush=True)
    for line in sys.stdin:
        words = line.split()
        command = words[0] if words else ''
        k = max(1, int(words[1]) if len(words) > 1 and words[1].isdigit() else 1)
        if command == 'warm':
            for _ in range(k):
                session.run(None, feeds)
            print('warm', flush=True)
        elif command == 'run':
            start = time.perf_counter()
            session.run(None, feeds)
            while time.perf_counter() - start < 0.1:
                session.run(None, feeds)
            times = []
            for _ in range(k):
                t = time.perf_counter()
                session.run(None, feeds)
                times.append(time.perf_counter() - t)
            print('times ' + ' '.join('%.9f' % t for t in times), flush=True)
        else:
            break


if __name__ == '__main__':
    main()
