#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
# The first run exports six torchvision models into build/models (~30 s);
# later runs reuse them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DRAMIEL_BUILD_TESTS=ON
# ONNX Runtime, for tst_passes' check of exported models (skipped where it is missing).
if command -v npm > /dev/null && [ ! -d build/ort/node_modules/onnxruntime-node ]; then
  (mkdir -p build/ort && cd build/ort &&
   ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node > install.log 2>&1) ||
    echo "test: could not install onnxruntime-node (build/ort/install.log); its checks will be skipped"
fi
cd build
ctest --output-on-failure --timeout 1200 -j "$(nproc)"
