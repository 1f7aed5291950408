#!/usr/bin/env bash
# Installs every Debian package that Ramiel's build, app, tests and tools need.
# Idempotent: does nothing (and needs no network) when all packages are present.
# Run as root on Debian 12 (bookworm).
#   --fuzz   also install clang and its runtime, for the libFuzzer targets (docs/fuzzing.md)
set -euo pipefail

packages=(
  # build
  cmake g++ pkg-config ninja-build ccache
  # libraries
  qt6-base-dev qt6-svg-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgraphviz-dev
  libtorch-dev libopenblas0-openmp
  libdnnl-dev  # oneDNN's headers: the runtime makes its convolution primitives itself
  libomp5-14  # LLVM's OpenMP runtime, which the programs run libtorch and oneDNN on
  nlohmann-json3-dev libcli11-dev
  # tests: ONNX conformance data, real models exported with torchvision,
  # generated Python linted with pyflakes
  libonnx-testdata
  python3-torch python3-torchvision python3-onnx python3-numpy python3-pyflakes
  # GUI tests under a virtual display, screenshots
  xvfb xauth imagemagick
  # packaging: man pages (help2man) and icons (rsvg-convert) made at build time;
  # cpack -G DEB (dpkg-shlibdeps); the package test's validators; lintian
  help2man librsvg2-bin dpkg-dev desktop-file-utils appstream shared-mime-info lintian
  # npm fetches ONNX Runtime (onnxruntime-node) over https for the tests and benchmarks
  ca-certificates
)

# Node.js and npm: Debian's packages unless the commands are already there
# (a Node.js from elsewhere bundles npm and conflicts with Debian's npm package).
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  packages+=(nodejs npm)
fi

if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or install them with apt-get) and try again" >&2
  exit 1
fi

echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
