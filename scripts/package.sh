#!/usr/bin/env bash
# Builds Ramiel's Debian package into dist/: installs what is missing, builds
# ./build, packs it with CPack (cpack -G DEB) and checks the result with lintian
# (fails on errors). Extra arguments go to CMake's configure step.
# Install the result with: apt install ./dist/ramiel_*.deb
# (packaging/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh "$@"
# CPack installs from the build tree as it is (with Ninja it builds nothing itself).
rm -rf build/cpack
cpack -G DEB --config build/CPackConfig.cmake -B build/cpack
debs=(build/cpack/*.deb)
mkdir -p dist
rm -f dist/ramiel_*.deb   # only this build's package, so `apt install ./dist/ramiel_*.deb` takes it
cp "${debs[@]}" dist/
for deb in "${debs[@]}"; do
  lintian --fail-on error "dist/$(basename "$deb")"
  echo "package.sh: wrote dist/$(basename "$deb") ($(du -k "dist/$(basename "$deb")" | cut -f1) KiB)"
done
