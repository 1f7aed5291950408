#!/usr/bin/env bash
# Configures and builds Ramiel into ./build (Release with debug info, Ninja).
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@"
cmake --build build -j "$(nproc)"
