#!/usr/bin/env bash
# Runtime benchmarks behind docs/performance.md: `ramiel bench` (interleaved
# runs, medians) on the exported torchvision models. Usage:
#   bash bench/runtime_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-20}
ramiel="$build/bin/ramiel"
models="$build/models"

echo "## batch 1, P = 2, linear clustering with measured costs"
for m in googlenet inception_v3 squeezenet1_0 densenet121; do
  "$ramiel" bench "$models/$m.onnx" --cores 2 --runs "$runs"
done

echo
echo "## batch 4, P = 2, hyperclustering"
for m in googlenet inception_v3; do
  for d in 1 2 4; do
    "$ramiel" bench "$models/$m.onnx" --cores 2 --batch 4 --degree "$d" --runs "$runs"
  done
done
