#!/usr/bin/env bash
# Does the simulator predict what runs? For each model (default: every model in
# BUILD_DIR/models but swin_t) at P = 2: `ramiel bench --hybrid` measures per-node
# costs (alone, then inside the parallel run), plans the schedule and the hybrid,
# and times serial on 1 and P threads, the schedule and the hybrid, each in its own
# process, in turns. Printed: each configuration's measured median and spread, the
# simulated makespan (serial rows: costs measured alone; the schedule and the
# hybrid: costs measured in context), and the simulation's error (the bar: within 15 %).
# Usage: bash bench/sim_check.sh [BUILD_DIR] [MODEL.onnx...]
#   env: P (default 2), BATCH (default 1), DEGREE (default 1), RUNS (default 15), ALGO (default linear)
set -euo pipefail
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
P=${P:-2}
batch=${BATCH:-1}
degree=${DEGREE:-1}
runs=${RUNS:-15}
algo=${ALGO:-linear}
ramiel="$build/bin/ramiel"
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for f in "$build"/models/*.onnx; do
    case "$f" in *swin_t.onnx) ;; *) models+=("$f") ;; esac
  done
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/host_state.sh"
host_state "$ramiel" "$scratch" before

echo "# sim_check: $(date -u '+%Y-%m-%d %H:%M UTC'), P = $P, B = $batch, d = $degree, $algo, default passes, $runs runs each"
printf '%-14s | %-38s | %9s %19s | %9s | %7s\n' model configuration measured "p25-p75" simulated error
for f in "${models[@]}"; do
  "$ramiel" bench "$f" -p "$P" -b "$batch" -d "$degree" -a "$algo" --passes default --hybrid --runs "$runs" --json \
    > "$scratch/b.json" 2> /dev/null
  /usr/bin/python3 - "$f" "$scratch/b.json" <<'PY'
import json, os, sys
name = os.path.basename(sys.argv[1])[:-5]
for r in json.load(open(sys.argv[2]))['runs']:
    t = r['intra_op_threads']
    what = '%s (%d worker%s x %s%d thread%s)' % (r['configuration'], r['workers'], '' if r['workers'] == 1 else 's',
                                                 'up to ' if r['configuration'] == 'hybrid' else '', t, '' if t == 1 else 's')
    sim = r.get('simulated_ms')
    err = '%+6.1f%%' % (100 * (sim - r['median_ms']) / r['median_ms']) if sim else 'n/a'
    print('%-14s | %-38s | %9.2f %9.2f-%9.2f | %9s | %7s' % (name, what, r['median_ms'], r['p25_ms'], r['p75_ms'],
                                                          '%.2f' % sim if sim else 'n/a', err))
PY
done
echo "# $(host_state "$ramiel" "$scratch" after)"
