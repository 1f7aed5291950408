#!/usr/bin/env bash
# Ramiel against ONNX Runtime, every configuration alone: for each model in
# BUILD_DIR/models (and any given), serial latency on 1..P intra-op threads of
# ONNX Runtime (onnxruntime-node, sequential, all graph optimizations, one
# session per process) and of Ramiel (`ramiel profile --threads T --passes
# default`, a process of its own, whole-run median). The configurations take
# turns, ROUNDS times, each time in a fresh process; a figure is the median of
# its rounds' medians. Prints the table and the ratio of the bests.
# Usage: bash bench/ort_compare.sh [BUILD_DIR] [MODEL.onnx...]
#   env: P (default 2), RUNS per process (default 20), ROUNDS (default 3),
#        ORT_NODE_MODULES (default BUILD_DIR/ort/node_modules, as scripts/install-ort.sh installs)
set -euo pipefail
build=${1:-build}
shift $(( $# > 0 ? 1 : 0 ))
P=${P:-2}
runs=${RUNS:-20}
rounds=${ROUNDS:-3}
ramiel="$build/bin/ramiel"
ort=${ORT_NODE_MODULES:-$build/ort/node_modules}
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$ort/onnxruntime-node" ] || { echo "ort_compare: no onnxruntime-node in $ort (bash scripts/install-ort.sh $build/ort)" >&2; exit 1; }
shopt -s nullglob
models=("$build"/models/*.onnx "$@")
shopt -u nullglob
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The first input's dimensions, comma-separated (symbolic ones as 1); with a
# second argument, as Ramiel's --shape takes them (NAME=dims).
dims() {
  /usr/bin/python3 -c "import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
init = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in init][0]
d = ','.join(str(d.dim_value or 1) for d in x.type.tensor_type.shape.dim)
print(x.name + '=' + d if len(sys.argv) > 2 else d)" "$@"
}
ort_ms() { NODE_PATH="$ort" node "$here/ort_bench.js" "$1" "$runs" "$2" "$3" | /usr/bin/python3 -c "import json, sys; print(json.loads(sys.stdin.readline())['median_ms'])"; }
ramiel_ms() {  # a model with symbolic sizes (swin_t's batch) runs at the sizes ONNX Runtime gets
  rm -f "$scratch/p.json"
  "$ramiel" profile "$1" --passes default --threads "$2" --runs "$runs" --shape "$(dims "$1" name)" -o "$scratch/p.json" > /dev/null
  /usr/bin/python3 -c "import json; print(json.load(open('$scratch/p.json'))['median_total'] * 1e3)"
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

header="model"
for t in $(seq 1 "$P"); do header+=" | ORT ${t}t"; done
for t in $(seq 1 "$P"); do header+=" | Ramiel ${t}t"; done
echo "$header | Ramiel best / ORT best | Ramiel 1t / ORT 1t"
sep="---"; for _ in $(seq 1 $((2 * P + 2))); do sep+="|---"; done; echo "$sep"
for f in "${models[@]}"; do
  d=$(dims "$f")
  declare -A seen=()
  for r in $(seq 1 "$rounds"); do
    for t in $(seq 1 "$P"); do
      seen[ort$t]+="$(ort_ms "$f" "$d" "$t") "
      seen[ram$t]+="$(ramiel_ms "$f" "$t") "
    done
  done
  row="$(basename "$f" .onnx)"
  ob=1e300; rb=1e300
  for t in $(seq 1 "$P"); do v=$(echo "${seen[ort$t]}" | median); row+=" | $(printf %.2f "$v")"; ob=$(awk -v a="$ob" -v b="$v" 'BEGIN{print (b<a)?b:a}'); [ "$t" = 1 ] && o1=$v; done
  for t in $(seq 1 "$P"); do v=$(echo "${seen[ram$t]}" | median); row+=" | $(printf %.2f "$v")"; rb=$(awk -v a="$rb" -v b="$v" 'BEGIN{print (b<a)?b:a}'); [ "$t" = 1 ] && r1=$v; done
  row+=" | $(awk -v a="$rb" -v b="$ob" 'BEGIN{printf "%.2fx", a/b}') | $(awk -v a="$r1" -v b="$o1" 'BEGIN{printf "%.2fx", a/b}')"
  echo "$row"
  unset seen
done
echo
echo "(ms, medians of $rounds rounds of $runs runs, each configuration in its own process, in turns; Ramiel: default passes; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
