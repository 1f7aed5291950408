#!/usr/bin/env bash
# Runtime benchmarks behind docs/performance.md: `ramiel bench` (serial on 1 and
# P threads, inter-op parallel, hybrid; medians of runs taken in turns) on the
# exported torchvision models, and one-thread latency against ONNX Runtime. Usage:
#   bash bench/runtime_bench.sh [BUILD_DIR] [RUNS]
# ONNX Runtime (optional): install onnxruntime-node as bench/ort_bench.js says,
# into BUILD_DIR/ort or a folder named by ORT_NODE_MODULES.
set -euo pipefail
build=${1:-build}
runs=${2:-20}
ramiel="$build/bin/ramiel"
models="$build/models"

echo "## batch 1, P = 2, linear clustering with measured costs"
for m in googlenet inception_v3 squeezenet1_0 densenet121 resnet18; do
  "$ramiel" bench "$models/$m.onnx" --cores 2 --runs "$runs"
done

echo
echo "## batch 4, P = 2, hyperclustering"
for m in googlenet inception_v3; do
  for d in 1 2 4; do
    "$ramiel" bench "$models/$m.onnx" --cores 2 --batch 4 --degree "$d" --runs "$runs"
  done
done

ort=${ORT_NODE_MODULES:-$build/ort/node_modules}
if [ -d "$ort/onnxruntime-node" ] && command -v node >/dev/null; then
  echo
  echo "## one thread: Ramiel (no passes, default passes) and ONNX Runtime (sequential, all graph optimizations)"
  for m in googlenet inception_v3 squeezenet1_0 resnet18; do
    shape=1,3,224,224
    [ "$m" = inception_v3 ] && shape=1,3,299,299
    "$ramiel" profile "$models/$m.onnx" --runs "$runs" -o "$build/bench-$m-costs.json" | head -1
    "$ramiel" profile "$models/$m.onnx" --runs "$runs" --passes default -o "$build/bench-$m-costs-passes.json" | head -1
    NODE_PATH="$ort" node bench/ort_bench.js "$models/$m.onnx" "$runs" "$shape"
  done
fi
