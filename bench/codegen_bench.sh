#!/usr/bin/env bash
# Generated code against the runtime (docs/performance.md): for googlenet and
# inception_v3 at batch 1 on P = 2, one measured-cost table per model plans the
# schedule that `ramiel bench`, the generated Python and the generated C++ all
# run. Each prints serial (1 thread) and parallel medians. Usage:
#   bash bench/codegen_bench.sh [BUILD_DIR] [RUNS] [WORK_DIR]
set -euo pipefail
build=${1:-build}
runs=${2:-15}
work=${3:-$build/codegen-bench}
ramiel="$build/bin/ramiel"
models="$build/models"
mkdir -p "$work"

for m in googlenet inception_v3; do
  echo "## $m, batch 1, P = 2"
  "$ramiel" profile "$models/$m.onnx" -o "$work/$m.costs.json" > /dev/null
  "$ramiel" export "$models/$m.onnx" --lang python -p 2 --costs "$work/$m.costs.json" -o "$work/${m}_py" > /dev/null
  "$ramiel" export "$models/$m.onnx" --lang cpp -p 2 --costs "$work/$m.costs.json" -o "$work/${m}_cpp" > /dev/null
  cmake -S "$work/${m}_cpp" -B "$work/${m}_cpp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$work/${m}_cpp/build" > /dev/null
  echo "### runtime (ramiel bench)"
  "$ramiel" bench "$models/$m.onnx" -p 2 --costs "$work/$m.costs.json" --runs "$runs"
  echo "### generated Python"
  /usr/bin/python3 "$work/${m}_py/run.py" --input "$models/$m.input.npy" --runs "$runs"
  echo "### generated C++"
  "$work/${m}_cpp/build/model" --input "$models/$m.input.npy" --runs "$runs"
done
