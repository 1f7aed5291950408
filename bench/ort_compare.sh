#!/usr/bin/env bash
# Ramiel against ONNX Runtime, every configuration alone: for each model in
# BUILD_DIR/models (and any given), serial latency on 1..P intra-op threads of
# ONNX Runtime (onnxruntime-node, sequential, all graph optimizations; a session
# per process, bench/ort_worker.js) and of Ramiel (its serial executor, default
# passes; `ramiel time-worker`, what `ramiel bench` times its rows with), each
# configuration in a process of its own. The 2P processes load side by side, warm
# up one at a time, then take turns of BLOCK timed runs until each has RUNS
# (bench/turns.py), as `ramiel bench` does: a turn lasts tens of milliseconds, so
# every configuration meets the same mix of the host's states. A cloud host can
# move its vCPUs between cores that share a cache and cores that do not for
# seconds at a time (a cache line's round trip of 60 against 340 ns on session
# 27's host, where mnasnet0_5 then scaled 1.74x or 1.13x from one thread to two);
# one process per configuration, one after another, met different ones. ROUNDS
# times with fresh processes; a figure is the median of its rounds' medians.
# Prints the table: the latencies, each runtime's scaling from 1 to P threads,
# the ratio of the bests and of the one-thread figures, taken round by round (the
# range beside a ratio is its lowest and highest round, which tells a difference
# from the host's drift), and each round's lowest and highest round trip
# (`ramiel calibrate --host`, before every cycle of turns), starred where they
# differ more than 2x. Under the table: how many models meet each of the
# runtime's targets (docs/performance.md), by the medians of the rounds; the
# others by name with their median ratio and best round's and the rounds in
# which the host moved, and how many of them meet the target in some round. The
# last line gives the host's state before and after, without which times from
# another hour cannot be compared.
# Usage: bash bench/ort_compare.sh [BUILD_DIR] [MODEL.onnx...]
#   env: P (default 2), THREADS: the thread counts timed, 1 first (default 1..P; on a
#        many-core host "1 4 8 16", the scaling then read from 1 to the last),
#        RUNS per configuration and round (default 20), BLOCK timed runs per turn
#        (default 3), ROUNDS (default 3),
#        ORT_NODE_MODULES (default BUILD_DIR/ort/node_modules, as scripts/install-ort.sh installs),
#        ORT_WORKER=python: Python's onnxruntime (bench/ort_worker.py) where there is no
#        Node.js; PYTHON: the interpreter (default /usr/bin/python3; it needs onnx, and
#        onnxruntime with ORT_WORKER=python)
set -euo pipefail
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
P=${P:-2}
read -r -a threads <<< "${THREADS:-$(seq -s ' ' 1 "$P")}"
[ "${threads[0]}" = 1 ] || { echo "ort_compare: THREADS must start with 1, not '${threads[*]}'" >&2; exit 2; }
P=${threads[-1]}
py=${PYTHON:-/usr/bin/python3}
worker=${ORT_WORKER:-node}
runs=${RUNS:-20}
block=${BLOCK:-3}
rounds=${ROUNDS:-3}
ramiel="$build/bin/ramiel"
ort=${ORT_NODE_MODULES:-$build/ort/node_modules}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/host_state.sh"
[ "$worker" = python ] || [ -d "$ort/onnxruntime-node" ] || { echo "ort_compare: no onnxruntime-node in $ort (bash scripts/install-ort.sh $build/ort)" >&2; exit 1; }
shopt -s nullglob
models=("$build"/models/*.onnx "$@")
shopt -u nullglob
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export SUMMARY="$scratch/summary"
: > "$SUMMARY"

# The first input's dimensions, comma-separated (symbolic ones as 1); with a
# second argument, as Ramiel's --shape takes them (NAME=dims).
dims() {
  "$py" -c "import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
init = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in init][0]
d = ','.join(str(d.dim_value or 1) for d in x.type.tensor_type.shape.dim)
print(x.name + '=' + d if len(sys.argv) > 2 else d)" "$@"
}
# One round of a model: both runtimes on each of THREADS, in turns (bench/turns.py);
# prints its JSON (medians by configuration, ortT and ramT, and the round trips).
# Ramiel's workers warm up until their executors have settled (warm K stops there).
# With a fourth argument, NAME=FILE.npy, both read the first input from that file (its sizes
# fix the input's).
round_of() {
  "$py" - "$(realpath "$1")" "$2" "$3" "${4:-}" <<PY | "$py" "$here/turns.py"
import json, sys
model, dims, shape, given = sys.argv[1:5]
inputs = [given] if given else []
if given:
    import numpy
    dims = given.split('=', 1)[1]
    shape = shape.split('=')[0] + '=' + ','.join(str(d) for d in numpy.load(dims, mmap_mode='r').shape)
ort = ['$py', '$here/ort_worker.py'] if '$worker' == 'python' else ['env', 'NODE_PATH=$ort', 'node', '$here/ort_worker.js']
workers = []
for t in [${threads[*]/%/,}]:
    request = '$scratch/request%d.json' % t
    json.dump({'model': model, 'shapes': [shape], 'inputs': inputs, 'passes': 'default', 'batch': 1, 'seed': 1,
               'label': 'serial', 'threads': t}, open(request, 'w'))
    workers.append({'name': 'ort%d' % t, 'warm': 3, 'command': ort + [model, dims, str(t)]})
    workers.append({'name': 'ram%d' % t, 'warm': 1000, 'command': ['$ramiel', 'time-worker', request]})
print(json.dumps({'runs': $runs, 'block': $block, 'probe': ['$ramiel', 'calibrate', '--host', '--json'],
                  'workers': workers}))
PY
}
# One table row from a model's rounds: NAME 'THREADS' ROUND.json... (round_of's output, one a
# round). The last column gives each round's lowest-highest round trip, starred where
# they are more than 2x apart (core's roundTripMoved: the host moved its vCPUs).
row() {
  "$py" - "$@" <<'PY'
import json, os, statistics, sys
name, threads = sys.argv[1], [int(t) for t in sys.argv[2].split()]
p = len(threads)
rounds_json = [json.load(open(f)) for f in sys.argv[3:]]
configs = ['ort%d' % t for t in threads] + ['ram%d' % t for t in threads]
cols = [[float(r['medians_ms'][c]) for r in rounds_json] for c in configs]
def trip_range(t):
    return '%.0f-%.0f%s' % (min(t), max(t), '*' if max(t) > 2 * min(t) else '') if t else 'none'
trips = [trip_range(r['round_trips_ns']) for r in rounds_json]
ort, ram = cols[:p], cols[p:]
med = statistics.median
rounds = range(len(cols[0]))
def ranged(values):
    return '%.2fx (%.2f-%.2f)' % (med(values), min(values), max(values))
best = [min(c[r] for c in ram) / min(c[r] for c in ort) for r in rounds]
scaling = [(ram[0][r] / ram[-1][r]) / (ort[0][r] / ort[-1][r]) for r in rounds]
one = [ram[0][r] / ort[0][r] for r in rounds]
cells = [name] + ['%.2f' % med(c) for c in cols]
cells += ['%.2f' % (med(ort[0]) / med(ort[-1])), '%.2f' % (med(ram[0]) / med(ram[-1])), ranged(scaling)]
cells += [ranged(best), ranged(one), ', '.join(trips)]
print(' | '.join(cells))
moved = sum(t.endswith('*') for t in trips)
with open(os.environ['SUMMARY'], 'a') as f:  # the medians the summary counts, the ratios' best rounds, moved rounds
    f.write('%s %f %f %f %f %f %f %f %f %d %d\n' % (name, med(ram[-1]), med(ram[0]), med(scaling), med(best),
                                                    med(one), max(scaling), min(best), min(one), moved, len(trips)))
PY
}
# The runtime's targets counted over the table's models (medians of the rounds).
summary() {
  "$py" - "$SUMMARY" "$P" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
p = sys.argv[2]
def bar(text, holds, ratio=None):
    """Counts the models whose medians meet a target; names the others, with the median ratio and
    the best round's where the target is a ratio and the rounds in which the host moved, and says
    how many meet it in some round."""
    short = [r for r in rows if not holds(*map(float, r[1:6]))]
    line = '%s: %d of %d' % (text, len(rows) - len(short), len(rows))
    if short:
        values = [list(map(float, r[1:])) for r in short]
        def named(r, v):
            notes = (['best round %.2fx' % v[ratio[1]]] if ratio else []) + \
                    (['host moved in %d of %d rounds' % (v[8], v[9])] if v[8] else [])
            return r[0] + (' %.2fx' % v[ratio[0]] if ratio else '') + (' [%s]' % '; '.join(notes) if notes else '')
        line += ' (not: %s)' % ', '.join(named(r, v) for r, v in zip(short, values))
        if ratio:
            some = sum(1 for v in values if ratio[2](v[ratio[1]]))
            line += '; in some round %d of these %d' % (some, len(short))
    print(line)
bar('Ramiel on %st no slower than on 1t' % p, lambda pt, t1, scaling, best, one: pt <= t1)
bar("Ramiel's scaling at least ONNX Runtime's", lambda pt, t1, scaling, best, one: scaling >= 1.0,
    (2, 5, lambda v: v >= 1.0))
bar("Ramiel's best at least as fast as ONNX Runtime's best", lambda pt, t1, scaling, best, one: best <= 1.0,
    (3, 6, lambda v: v <= 1.0))
bar("Ramiel's 1t within 1.15x of ONNX Runtime's 1t", lambda pt, t1, scaling, best, one: one <= 1.15,
    (4, 7, lambda v: v <= 1.15))
PY
}

host_state "$ramiel" "$scratch" before
header="model"
for t in "${threads[@]}"; do header+=" | ORT ${t}t"; done
for t in "${threads[@]}"; do header+=" | Ramiel ${t}t"; done
header+=" | ORT 1->${P}t | Ramiel 1->${P}t | Ramiel scaling / ORT's (rounds) | Ramiel best / ORT best (rounds)"
echo "$header | Ramiel 1t / ORT 1t (rounds) | round trip, ns (rounds)"
sep="---"; for _ in $(seq 1 $((2 * ${#threads[@]} + 6))); do sep+="|---"; done; echo "$sep"
for f in "${models[@]}"; do
  d=$(dims "$f")
  shape=$(dims "$f" name)
  given=""  # the first input's data beside the model, as the tests export it
  [ -f "${f%.onnx}.input.npy" ] && given="${shape%%=*}=$(realpath "${f%.onnx}.input.npy")"
  for r in $(seq 1 "$rounds"); do
    round_of "$f" "$d" "$shape" "$given" > "$scratch/round$r.json"
  done
  row "$(basename "$f" .onnx)" "${threads[*]}" $(seq -f "$scratch/round%g.json" 1 "$rounds")
done
echo
summary
echo
echo "(ms, medians of $rounds rounds of $runs runs, each configuration in its own process, in turns of $block runs; scaling: 1 thread's time over P threads'; ratios: medians of the rounds' ratios, lowest and highest round in brackets; Ramiel: default passes; $(nproc) cores; $(host_state "$ramiel" "$scratch" after))"
