#!/usr/bin/env bash
# Installs what is missing, builds, and runs Ramiel's main job on the bundled
# sample model: the report of `ramiel info`. Any arguments replace the model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
model=("${@:-resources/models/inception_sample.onnx}")
exec ./build/bin/ramiel info "${model[@]}"
