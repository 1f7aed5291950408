#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
# The first run exports six torchvision models into build/models (~30 s);
# later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DRAMIEL_BUILD_TESTS=ON
# ONNX Runtime, the reference tst_passes checks exported models against.
bash scripts/install-ort.sh build/ort
cd build
ctest --output-on-failure --timeout 1200 -j "$(nproc)"
