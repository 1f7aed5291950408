#!/usr/bin/env bash
# Does the configuration `ramiel tune` picks hold up when measured again? For
# each model (default: every model in BUILD_DIR/models) and batch: tune at
# P = 2 within the budget, then `ramiel bench --config` on the chosen
# configuration in a separate run (each configuration in its own process),
# and print the chosen configuration, tune's time, and bench's medians with
# the ratio to the best serial configuration (>= 1.00 is the bar) and the
# spread (p25-p75) of the chosen row.
# Usage: bash bench/tune_check.sh [BUILD_DIR] [MODEL.onnx...]
#   env: P (default 2), BATCHES (default "1 4"), BUDGET (default 30), RUNS (bench, default 20)
set -euo pipefail
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
P=${P:-2}
batches=${BATCHES:-1 4}
budget=${BUDGET:-30}
runs=${RUNS:-20}
ramiel="$build/bin/ramiel"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=("$build"/models/*.onnx)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/host_state.sh"
host_state "$ramiel" "$scratch" before

printf '%-14s %2s | %-48s %7s | %9s %9s %9s | %8s %8s | %s\n' model B "chosen (workers x threads)" "tune s" \
  "serial 1t" "serial Pt" chosen "vs 1t" "vs best" "chosen p25-p75"
# --shape NAME=d1,... for a first input with symbolic sizes (set to 1; -b scales the batch), else nothing.
shape() {
  /usr/bin/python3 -c "import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
init = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in init][0]
d = x.type.tensor_type.shape.dim
if any(not e.dim_value for e in d):
    print('--shape', x.name + '=' + ','.join(str(e.dim_value or 1) for e in d))" "$1"
}
for f in "${models[@]}"; do
  read -r -a sizes <<< "$(shape "$f")"
  for b in $batches; do
    "$ramiel" tune "$f" "${sizes[@]}" -p "$P" -b "$b" --budget "$budget" --json -o "$scratch/c.json" > "$scratch/t.json"
    "$ramiel" bench "$f" --config "$scratch/c.json" --runs "$runs" --json > "$scratch/b.json"
    /usr/bin/python3 - "$f" "$b" "$scratch/t.json" "$scratch/c.json" "$scratch/b.json" <<'PY'
import json, os, sys
model, batch, t, c, b = sys.argv[1:]
t, c, b = (json.load(open(p)) for p in (t, c, b))
rows = b["runs"]
serial = [r for r in rows if r["configuration"] == "serial"]
s1, sp = serial[0]["median_ms"], serial[1]["median_ms"]
if len(rows) > 2:
    chosen = rows[2]
else:  # a serial configuration on 1 or P threads is timed as that serial row
    chosen = next(r for r in serial if r["intra_op_threads"] == c["serial_threads"])
best = min(s1, sp)
print("%-14s %2s | %-48s %7.1f | %9.2f %9.2f %9.2f | %7.2fx %7.2fx | %.2f-%.2f" % (
    os.path.basename(model)[:-5], batch, c["label"][:48], t["total_seconds"], s1, sp, chosen["median_ms"],
    s1 / chosen["median_ms"], best / chosen["median_ms"], chosen["p25_ms"], chosen["p75_ms"]))
PY
  done
done
echo "(ms; tune budget ${budget} s; bench --config: $runs runs each, each configuration in its own process, in turns; P = $P; $(nproc) cores; $(host_state "$ramiel" "$scratch" after))"
