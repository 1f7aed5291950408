#!/usr/bin/env bash
# Does a model's scaling from 1 to P threads follow the host's state? On a cloud
# host the vCPUs can sit on cores that share a cache for seconds, then on cores
# that do not, and a cache line's round trip between them moves with it (60
# against 340 ns on session 27's host). For each model, PAIRS pairs of processes
# in turns: `ramiel profile --threads 1`, then `--threads P` (each a process of
# its own, whole-run median of RUNS runs; each probes the round trip before and
# after its runs). A pair is "near" where all four probes are within 2x of the
# lowest the model's pairs saw, "far" where all are above that, "mixed" where
# they straddle it. Prints, per model and state, the pairs, the medians on 1 and
# P threads, the scaling (1 thread's time over P threads', median and quartiles
# over the pairs) and in how many pairs P threads were slower than one.
# Usage: [P=2] [RUNS=20] [PAIRS=30] bash bench/host_phases.sh [BUILD_DIR] MODEL.onnx...
set -euo pipefail
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
[ $# -gt 0 ] || { echo "usage: bash bench/host_phases.sh [BUILD_DIR] MODEL.onnx..." >&2; exit 2; }
P=${P:-2}
runs=${RUNS:-20}
pairs=${PAIRS:-30}
ramiel="$build/bin/ramiel"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/host_state.sh"
host_state "$ramiel" "$scratch" before

# "MS TRIP_BEFORE TRIP_AFTER" of one process on T threads (trips in ns, -1 where not measured).
timed() {
  "$ramiel" profile "$1" --passes default --threads "$2" --runs "$runs" -o "$scratch/p.json" > /dev/null
  /usr/bin/python3 -c "import json, sys
j = json.load(open(sys.argv[1]))
trip = lambda s: s['round_trip_ns'] if s['round_trip_ns'] is not None else -1
print(j['median_total'] * 1e3, trip(j['host']['before']), trip(j['host']['after']))" "$scratch/p.json"
}

printf '%-20s %-6s %5s | %8s %8s | %-22s | %s\n' model state pairs "1t ms" "${P}t ms" "scaling (quartiles)" "${P}t slower"
for f in "$@"; do
  : > "$scratch/pairs"
  for _ in $(seq 1 "$pairs"); do
    echo "$(timed "$f" 1) $(timed "$f" "$P")" >> "$scratch/pairs"
  done
  /usr/bin/python3 - "$scratch/pairs" "$(basename "$f" .onnx)" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
trips = lambda r: [r[1], r[2], r[4], r[5]]
measured = [t for r in rows for t in trips(r) if t > 0]
line = 2 * min(measured) if measured else None
def state(r):
    if line is None:
        return 'near'  # one CPU: no round trip to move
    t = trips(r)
    return 'near' if max(t) <= line else 'far' if min(t) > line else 'mixed'
for name in ('near', 'far', 'mixed'):
    sel = [r for r in rows if state(r) == name]
    if not sel:
        continue
    scaling = [r[0] / r[3] for r in sel]
    q = statistics.quantiles(scaling, n=4) if len(sel) > 1 else [scaling[0]] * 3
    print('%-20s %-6s %5d | %8.2f %8.2f | %-22s | %d' % (
        sys.argv[2], name, len(sel), statistics.median(r[0] for r in sel), statistics.median(r[3] for r in sel),
        '%.2fx (%.2f-%.2f)' % (statistics.median(scaling), q[0], q[2]), sum(s < 1 for s in scaling)))
if line is not None:
    print('%-20s (near: every round trip of the pair at most %.0f ns, twice the lowest seen)' % ('', line))
PY
done
echo
echo "(pairs of processes in turns, $runs runs each, default passes; $(nproc) cores; $(host_state "$ramiel" "$scratch" after))"
