#!/usr/bin/env bash
# Installs what is missing, builds, and runs Ramiel's main job on the bundled
# sample model: Ramiel Studio where there is a display, else the CLI report
# of `ramiel info`. Any arguments replace the model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
model=("${@:-resources/models/inception_sample.onnx}")
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/bin/ramiel-studio "${model[@]}"
fi
echo "run.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset): printing the CLI report instead of opening Ramiel Studio" >&2
exec ./build/bin/ramiel info "${model[@]}"
