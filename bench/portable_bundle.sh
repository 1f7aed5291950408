#!/usr/bin/env bash
# Packs a build's `ramiel` with the libraries it loads into one archive, for timing on an
# x86-64 Linux host without Debian's packages (the 16-core machine of docs/performance.md).
# The archive unpacks to ramiel/: bin/ramiel (a wrapper that puts lib/ on the library path),
# the build's programs and libraries without their debug information, the Debian libraries
# they load (glibc and the C++ runtime excepted: the host's, which are newer, serve), and in
# place of the libraries Debian's libtorch links for Caffe2's operators and never calls from
# Ramiel's (OpenCV, FFmpeg, LMDB, LevelDB, Snappy, ZeroMQ, Gloo, TensorPipe: 360 MB with what
# they load in turn) a stub each, of the same name, defining the symbols libtorch imports from
# it as functions that abort. On the host:
#   tar -xJf ramiel.tar.xz -C /tmp && /tmp/ramiel/bin/ramiel --version
#   THREADS="1 4 8 16" ORT_WORKER=python PYTHON=python3 bash bench/ort_compare.sh /tmp/ramiel M.onnx...
# Usage: bash bench/portable_bundle.sh [BUILD_DIR] [OUT.tar.xz]   (default build, ramiel.tar.xz)
set -euo pipefail
build=$(realpath "${1:-build}")
out=$(realpath "${2:-ramiel.tar.xz}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
root="$scratch/ramiel"
mkdir -p "$root/bin" "$root/lib" "$scratch/stubs"
torch=$(ldd "$build/lib/libramiel_runtime.so" | awk '$1 ~ /^libtorch_cpu/ {print $3}')
[ -n "$torch" ] || { echo "portable_bundle: $build/lib/libramiel_runtime.so does not load libtorch_cpu" >&2; exit 1; }

# The stubs: for each library libtorch_cpu needs that matches the list, the symbols it imports
# and that library defines (readelf), as aborting functions or zeroed data of the same size.
/usr/bin/python3 - "$torch" "$scratch/stubs" <<'PY'
import os, re, subprocess, sys
torch, stubs = sys.argv[1:3]
stubbed = re.compile(r'^lib(opencv_|avcodec|avformat|avutil|swscale|swresample|lmdb|leveldb|snappy|zmq|gloo|tensorpipe)')

def symbols(path):
    """(name, version or None, type, size, section) of each dynamic symbol."""
    out = subprocess.run(['readelf', '--dyn-syms', '-W', path], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].rstrip(':').isdigit():
            name, _, version = f[7].partition('@')
            yield name, version.lstrip('@') or None, f[3], int(f[2], 0), f[6]

needed = re.findall(r'\(NEEDED\)\s+Shared library: \[(.+?)\]',
                    subprocess.run(['readelf', '-d', torch], check=True, capture_output=True, text=True).stdout)
imported = {name for name, _, _, _, section in symbols(torch) if section == 'UND'}
installed = subprocess.run(['/sbin/ldconfig', '-p'], check=True, capture_output=True, text=True).stdout
for soname in filter(stubbed.match, needed):
    found = re.search(r'^\s+%s \(libc6,x86-64\) => (\S+)$' % re.escape(soname), installed, re.M)
    if not found:
        sys.exit('portable_bundle: %s (needed by %s) is not installed' % (soname, torch))
    source = ['#include <stdlib.h>']
    for i, (name, version, kind, size, section) in enumerate(symbols(found.group(1))):
        if section == 'UND' or name not in imported or kind not in ('FUNC', 'IFUNC', 'OBJECT'):
            continue
        if version:
            sys.exit('portable_bundle: %s exports %s with a version; stubs have none' % (soname, name))
        if kind == 'OBJECT':
            source.append('char s%d[%d] __asm__("%s") = {0};' % (i, max(size, 1), name))
        else:
            source.append('void s%d(void) __asm__("%s");\nvoid s%d(void) { abort(); }' % (i, name, i))
    c = os.path.join(stubs, soname + '.c')
    with open(c, 'w') as f:
        f.write('\n'.join(source) + '\n')
    subprocess.run(['gcc', '-shared', '-fPIC', '-o', os.path.join(stubs, soname), c, '-Wl,-soname,' + soname],
                   check=True)
PY

# The programs, then every library they load with the stubs in place, each under its soname.
cp "$build/bin/ramiel" "$root/bin/ramiel.bin"
cp "$build/bin/bench_memory_bandwidth" "$root/bin/"  # libc and libstdc++ only
cp "$build/lib/libramiel_core.so" "$build/lib/libramiel_runtime.so" "$root/lib/"
strip --strip-debug "$root/bin/ramiel.bin" "$root/bin/bench_memory_bandwidth" "$root/lib/"*.so
LD_LIBRARY_PATH="$scratch/stubs" ldd "$build/bin/ramiel" "$build/lib/libramiel_runtime.so" > "$scratch/ldd"
if grep -q "not found" "$scratch/ldd"; then
  echo "portable_bundle: missing libraries: $(grep "not found" "$scratch/ldd" | awk '{print $1}' | sort -u | tr '\n' ' ')" >&2
  exit 1
fi
awk '$3 ~ /^\// {print $1, $3}' "$scratch/ldd" | sort -u | while read -r soname path; do
    case $soname in
      libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
      libramiel_*) ;;
      *) cp -L "$path" "$root/lib/$soname" ;;
    esac
  done
cat > "$root/bin/ramiel" <<'SH'
#!/bin/sh
# Ramiel with the libraries packed beside it (bench/portable_bundle.sh).
here=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH="$here/lib" exec "$here/bin/ramiel.bin" "$@"
SH
chmod +x "$root/bin/ramiel"
"$root/bin/ramiel" --version > /dev/null  # loads the runtime library, and with it libtorch
tar -C "$scratch" -cf - ramiel | xz -T0 -6 > "$out.tmp"
mv "$out.tmp" "$out"
echo "portable_bundle: $out ($(du -h "$out" | cut -f1); $(ls "$root/lib" | wc -l) libraries, $(ls "$scratch/stubs"/*.c | wc -l) of them stubs)"
