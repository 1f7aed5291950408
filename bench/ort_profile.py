#!/usr/bin/env python3
"""bench/ort_profile.js for a host with Python's onnxruntime and no Node.js: ONNX Runtime's
time per operator type with profiling on (one sequential session, all graph optimizations),
RUNS timed runs after 3 warm-ups; prints the same JSON {model, threads, median_run_ms, ops,
nodes} (ops: ms per run summed over the op's nodes, median over runs; nodes: each node's
median), which bench/optype_compare.py reads.
The first input: random floats of the sizes given, or a .npy file's data.
Usage: python3 bench/ort_profile.py MODEL.onnx RUNS 1,3,224,224|INPUT.npy THREADS
"""
import json
import os
import shutil
import statistics
import sys
import tempfile

import numpy as np
import onnxruntime as ort

from ort_worker import first_input


def main():
    model, runs, dims_text, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    scratch = tempfile.mkdtemp(prefix='ortprof')
    options = ort.SessionOptions()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(scratch, 'p')
    session = ort.InferenceSession(model, options, providers=['CPUExecutionProvider'])
    feeds = {session.get_inputs()[0].name: first_input(dims_text)}
    for _ in range(3 + runs):
        session.run(None, feeds)
    with open(session.end_profiling()) as f:
        events = json.load(f)
    shutil.rmtree(scratch)

    # Node events come in run order; a node's kernel_time belongs to the run whose window holds it.
    windows = [(e['ts'], e['ts'] + e['dur']) for e in events if e.get('cat') == 'Session' and e['name'] == 'model_run']
    per_run = [{} for _ in windows]
    node_times = {}
    for e in events:
        if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time'):
            continue
        i = next((k for k, (a, b) in enumerate(windows) if a <= e['ts'] <= b), None)
        if i is None:
            continue
        op = e['args']['op_name']
        per_run[i][op] = per_run[i].get(op, 0) + e['dur']
        node_times.setdefault(e['name'][:-len('_kernel_time')], []).append(e['dur'])
    timed = per_run[3:]
    ops = {op for r in timed for op in r}
    print(json.dumps({
        'model': model, 'threads': threads,
        'median_run_ms': statistics.median(b - a for a, b in windows[3:]) / 1000,
        'ops': {op: statistics.median(r.get(op, 0) for r in timed) / 1000 for op in ops},
        'nodes': {k: statistics.median(v) / 1000 for k, v in node_times.items()},
    }))


if __name__ == '__main__':
    main()
