#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js (npm package onnxruntime-node), the
# reference the tests and benchmarks compare with, into DIR/node_modules
# (default build/ort). Does nothing when it is already there.
# ONNXRUNTIME_NODE_INSTALL=skip: its post-install step would download GPU
# binaries; the CPU library ships inside the npm package.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build/ort}"
if [ -d "$dir/node_modules/onnxruntime-node" ]; then
  exit 0
fi
mkdir -p "$dir"
if ! (cd "$dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node > install.log 2>&1); then
  echo "install-ort: npm install onnxruntime-node failed (last lines of $dir/install.log):" >&2
  tail -n 5 "$dir/install.log" >&2
  exit 1
fi
echo "install-ort: onnxruntime-node $(cd "$dir" && node -p 'require("onnxruntime-node/package.json").version') in $dir"
