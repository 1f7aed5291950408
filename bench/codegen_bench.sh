#!/usr/bin/env bash
# Generated code against the runtime (issue 18, docs/performance.md#generated-code-ramiel-export).
#
# For googlenet and inception_v3 at batch 1 and googlenet at batch 4 with d = 2, on P = 2 with the
# default passes, one measured-cost table per model plans the schedule that `ramiel bench`, the
# generated Python (run.py) and the generated C++ (model) all run: the same costs and settings give
# the same plan (the bounds printed side by side show it). Every configuration runs in its own
# process, and they take turns: ROUNDS rounds of (runtime, Python, C++) for each model, each with RUNS
# timed runs of serial and parallel; the table shows the median of the rounds' medians, with the
# thread configuration and the schedule's bound beside each speedup, and the host's state (bench/host_state.sh)
# before and after, since other processes on the machine change everything.
#
# Usage: bash bench/codegen_bench.sh [BUILD_DIR] [RUNS] [ROUNDS] [WORK_DIR]
#   ROUNDS = 0 profiles (where WORK_DIR has no cost table yet), exports and builds, and times nothing:
#   then a second run with the same WORK_DIR times without building on the side.
#   env: CONFIGS="MODEL BATCH DEGREE;..." to time other configurations than the three above
set -euo pipefail
build=${1:-build}
runs=${2:-10}
rounds=${3:-3}
work=${4:-$build/codegen-bench}
ramiel="$build/bin/ramiel"
models="$build/models"
python=/usr/bin/python3
mkdir -p "$work"
work=$(cd "$work" && pwd)
. "$(dirname "$0")/host_state.sh"

# model batch degree
configs=("googlenet 1 1" "inception_v3 1 1" "googlenet 4 2")
if [ -n "${CONFIGS:-}" ]; then  # e.g. CONFIGS="inception_v3 1 1;googlenet 4 2"
  IFS=';' read -r -a configs <<< "$CONFIGS"
fi
plan=(-p 2 --passes default)

host_state "$ramiel" "$work" before
echo "# codegen_bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $runs runs x $rounds rounds"
for c in "${configs[@]}"; do
  read -r m b d <<< "$c"
  name="${m}_b${b}_d${d}"
  costs="$work/$m.costs.json"
  [ -f "$costs" ] || "$ramiel" profile "$models/$m.onnx" --passes default -o "$costs" > /dev/null
  "$ramiel" export "$models/$m.onnx" --lang python "${plan[@]}" -b "$b" -d "$d" --costs "$costs" -o "$work/${name}_py" > /dev/null
  "$ramiel" export "$models/$m.onnx" --lang cpp "${plan[@]}" -b "$b" -d "$d" --costs "$costs" -o "$work/${name}_cpp" > /dev/null
  cmake -S "$work/${name}_cpp" -B "$work/${name}_cpp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$work/${name}_cpp/build" > /dev/null
done

if [ "$rounds" -eq 0 ]; then
  echo "# exported and built in $work; nothing timed (ROUNDS = 0)"
  exit 0
fi

for r in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    read -r m b d <<< "$c"
    name="${m}_b${b}_d${d}"
    "$ramiel" bench "$models/$m.onnx" "${plan[@]}" -b "$b" -d "$d" --costs "$work/$m.costs.json" --runs "$runs" --json \
      > "$work/$name.runtime.$r.json" 2> /dev/null
    "$python" "$work/${name}_py/run.py" --runs "$runs" > "$work/$name.python.$r.txt"
    "$work/${name}_cpp/build/model" --runs "$runs" > "$work/$name.cpp.$r.txt"
  done
done
after=$(host_state "$ramiel" "$work" after)

"$python" - "$work" "$rounds" "${configs[@]}" <<'EOF'
import json, re, statistics, sys

work, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


def generated(path):
    text = open(path).read()
    serial = re.search(r'^serial\s+([\d.]+) ms\s+\((\d+) intra-op thread', text, re.M)
    parallel = re.search(r'^parallel\s+([\d.]+) ms\s+\((.*)\)', text, re.M)
    bound = re.search(r'^speedup\s+[\d.]+x\s+\(bound ([\d.]+)x', text, re.M)
    if not serial or not parallel:
        raise SystemExit('%s: no timings in\n%s' % (path, text))
    return float(serial.group(1)), float(parallel.group(1)), parallel.group(2), float(bound.group(1)) if bound else None


def runtime(path):
    j = json.load(open(path))
    rows = j['runs']
    serial = next(r for r in rows if r['configuration'] == 'serial' and r['intra_op_threads'] == 1)
    par = next(r for r in rows if r['configuration'] in ('parallel', 'one worker'))
    threads = '%d workers x up to %d thread%s' % (par['workers'], par['intra_op_threads'], '' if par['intra_op_threads'] == 1 else 's')
    return serial['median_ms'], par['median_ms'], threads, j.get('speedup_bound')


for c in configs:
    m, b, d = c.split()
    name = '%s_b%s_d%s' % (m, b, d)
    rows = {}
    for kind, read, ext in (('runtime', runtime, 'json'), ('python', generated, 'txt'), ('cpp', generated, 'txt')):
        got = [read('%s/%s.%s.%d.%s' % (work, name, kind, r, ext)) for r in range(1, rounds + 1)]
        s = statistics.median(g[0] for g in got)
        p = statistics.median(g[1] for g in got)
        rows[kind] = (s, p, got[0][2], got[0][3], [g[0] / g[1] for g in got])
    print('\n## %s, batch %s, d = %s, P = 2, default passes' % (m, b, d))
    print('| | serial (1 thread) | parallel | speedup (rounds) | threads, bound |')
    print('|---|---|---|---|---|')
    labels = {'runtime': '`ramiel bench` (runtime)', 'python': 'generated Python (`run.py`)', 'cpp': 'generated C++ (`model`)'}
    for kind in ('runtime', 'python', 'cpp'):
        s, p, threads, bound, each = rows[kind]
        print('| %s | %.2f ms | %.2f ms | %.2fx (%s) | %s, bound %s |' % (
            labels[kind], s, p, s / p, ', '.join('%.2f' % x for x in each), threads,
            '%.2fx' % bound if bound else '?'))
    rs, rp = rows['runtime'][0], rows['runtime'][0] / rows['runtime'][1]
    for kind in ('python', 'cpp'):
        s, p = rows[kind][0], rows[kind][1]
        print('%s: serial %.2fx the runtime\'s (bar: <= 1.10x), speedup %.2f of the runtime\'s (bar: >= 0.90)' % (
            labels[kind], s / rs, (s / p) / rp))
EOF
echo
echo "$after"
