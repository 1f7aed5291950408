#!/usr/bin/env bash
# Does `ramiel bench` measure each configuration as it runs alone? For each
# model: serial on 1 and on P (default 2) intra-op threads timed alone (`ramiel profile
# --threads T`, a process of its own, whole-run median), inside `ramiel bench`
# (each configuration in its own process, the default) and inside `ramiel
# bench --same-process` (the old way), side by side, with the ratios to alone.
# ROUNDS times in turns (default 3); each figure is the median of its rounds'.
# Usage: [ROUNDS=N] [P=N] [PYTHON=python3] bash bench/isolation_check.sh [BUILD_DIR] [RUNS] [MODEL...]
set -euo pipefail
build=${1:-build}
runs=${2:-20}
shift $(( $# > 2 ? 2 : $# ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(googlenet mobilenet_v2 densenet121 inception_v3)
ramiel="$build/bin/ramiel"
P=${P:-2}
py=${PYTHON:-/usr/bin/python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/host_state.sh"
host_state "$ramiel" "$scratch" before

# Median whole-run time in ms of `ramiel profile` alone on T threads.
alone() {
  "$ramiel" profile "$1" --passes default --threads "$2" --runs "$runs" -o "$scratch/p.json" > /dev/null
  "$py" -c "import json; print(json.load(open('$scratch/p.json'))['median_total'] * 1e3)"
}
# Medians in ms of bench's two serial rows (1 and P threads), with extra options.
inbench() {
  "$ramiel" bench "$1" --passes default -p "$P" --runs "$runs" --json "${@:2}" > "$scratch/b.json"
  "$py" -c "import json; r = json.load(open('$scratch/b.json'))['runs']; \
print(*[x['median_ms'] for x in r if x['configuration'] == 'serial'])"
}

printf '%-14s %7s | %8s | %8s %6s | %10s %6s\n' model threads alone bench ratio same-proc ratio
rounds=${ROUNDS:-3}
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for m in "${models[@]}"; do
  f="$build/models/$m.onnx"
  A1=(); A2=(); B1=(); B2=(); S1=(); S2=()
  for r in $(seq 1 "$rounds"); do
    A1+=("$(alone "$f" 1)")
    A2+=("$(alone "$f" "$P")")
    read -r b1 b2 <<< "$(inbench "$f")"
    read -r s1 s2 <<< "$(inbench "$f" --same-process)"
    B1+=("$b1"); B2+=("$b2"); S1+=("$s1"); S2+=("$s2")
  done
  a1=$(echo "${A1[*]}" | median); a2=$(echo "${A2[*]}" | median)
  b1=$(echo "${B1[*]}" | median); b2=$(echo "${B2[*]}" | median)
  s1=$(echo "${S1[*]}" | median); s2=$(echo "${S2[*]}" | median)
  awk -v m="$m" -v p="$P" -v a1="$a1" -v a2="$a2" -v b1="$b1" -v b2="$b2" -v s1="$s1" -v s2="$s2" 'BEGIN {
    printf "%-14s %7d | %8.2f | %8.2f %6.2f | %10.2f %6.2f\n", m, 1, a1, b1, b1 / a1, s1, s1 / a1
    printf "%-14s %7d | %8.2f | %8.2f %6.2f | %10.2f %6.2f\n", m, p, a2, b2, b2 / a2, s2, s2 / a2 }'
done
echo "(ms, medians of $rounds rounds of $runs runs each, in turns; default passes; bench with -p $P; $(host_state "$ramiel" "$scratch" after))"
