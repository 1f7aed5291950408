#!/usr/bin/env bash
# The many-core check, as one prepared script for a host whose time is short (the 16-core
# machine of docs/performance.md: no Debian packages, Python's onnxruntime and PyTorch, no
# Node.js). Unpacks a bundle from bench/portable_bundle.sh, exports the models there, and
# writes into OUT_DIR, each step's file as soon as the step ends (a step cut short by the
# host's time limit leaves the ones before it):
#   bandwidth.txt the host's memory read rate on 1..P threads (bench_memory_bandwidth), beside
#                 its cache line round trip: the bound of kernels that stream their weights
#   optype_M.txt  per operator type, 1 against P threads, Ramiel against ONNX Runtime (PROFILE)
#   scaling.txt   bench/ort_compare.sh on 1 and P threads, every configuration alone
#   bar4.txt      batch 4, P = 2, d = 2 hyperclustering pinned to two cores (BAR4)
#   log.txt       everything, with the seconds each step took
# Usage: bash bench/many_core_check.sh BUNDLE.tar.xz OUT_DIR [MODEL_NAME...]
#   MODEL_NAME: torchvision names for tests/models/export_models.py (default: the test set's
#   seven but swin_t, and resnet50); env: P (default: the host's CPUs), ROUNDS (2), RUNS (15),
#   PROFILE (default "googlenet squeezenet1_0"; "" for none), BAR4 (default "googlenet
#   resnet18 squeezenet1_0"; "" for none), PYTHON (default python3: it needs torch,
#   torchvision, onnx and onnxruntime), ORT_WORKER=node with ORT_NODE_MODULES where ONNX
#   Runtime is onnxruntime-node instead (as on the 2-core machines).
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
bundle=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
shift 2
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(googlenet squeezenet1_0 mobilenet_v2 resnet18 inception_v3 densenet121 resnet50)
P=${P:-$(nproc)}
py=${PYTHON:-python3}
worker=${ORT_WORKER:-python}
profile=${PROFILE-googlenet squeezenet1_0}
bar4=${BAR4-googlenet resnet18 squeezenet1_0}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ort_profile() {  # MODEL RUNS DIMS THREADS: ONNX Runtime's per-operator JSON
    if [ "$worker" = python ]; then "$py" "$here/ort_profile.py" "$@"
    else NODE_PATH="${ORT_NODE_MODULES:-}" node "$here/ort_profile.js" "$@"; fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exec > >(tee "$out/log.txt") 2>&1
start=$(date +%s)
step() { echo "[$(( $(date +%s) - start )) s] $*"; }

tar -xJf "$bundle" -C "$work" || { echo "many_core_check: cannot unpack $bundle" >&2; exit 1; }
build="$work/ramiel"
ramiel="$build/bin/ramiel"
"$ramiel" --version || exit 1
echo "$(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-); load average $(cut -d' ' -f1-3 /proc/loadavg)"
models="$work/models"
mkdir -p "$models"
"$py" "$root/tests/models/export_models.py" "$models" "${names[@]}" 2>&1 | grep -v -i warn
step exported

{ "$ramiel" calibrate --host; "$build/bin/bench_memory_bandwidth" 400 "$P"; "$ramiel" calibrate --host; } |
    tee "$out/bandwidth.txt"
step "memory bandwidth"

for m in $profile; do
    f="$models/$m.onnx"
    [ -f "$f" ] || { echo "many_core_check: $m is not among the exported models" >&2; continue; }
    "$ramiel" optimize "$f" --passes default -o "$work/$m.opt.onnx" > /dev/null || continue
    for t in 1 "$P"; do
        "$ramiel" profile "$f" --passes default --threads "$t" --runs 20 -o "$work/r$t.json" > /dev/null &&
            ort_profile "$f" 20 1,3,224,224 "$t" > "$work/o$t.json" || continue 2
    done
    echo "== $m, 1 against $P threads (ms a run; profiling adds to ONNX Runtime's runs)"
    "$py" "$here/optype_compare.py" "$work/$m.opt.onnx" "$work/r1.json" "$work/r$P.json" "$work/o1.json" \
        "$work/o$P.json" | tee "$out/optype_$m.txt"
    step "profiled $m"
done

THREADS="1 $P" ORT_WORKER="$worker" PYTHON="$py" RUNS=${RUNS:-15} ROUNDS=${ROUNDS:-2} \
    bash "$here/ort_compare.sh" "$build" "$models"/*.onnx | tee "$out/scaling.txt"
step compared

for m in $bar4; do
    [ -f "$models/$m.onnx" ] || continue
    echo "== $m"
    taskset -c 0,1 "$ramiel" bench "$models/$m.onnx" -p 2 -b 4 -d 2 --passes default --runs 15 | tee -a "$out/bar4.txt"
done
[ -z "$bar4" ] || step "bar 4"
