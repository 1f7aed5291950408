#!/usr/bin/env bash
# Runs the README's two commands as a new user would: on a minimal Debian 12
# root (debootstrap --variant=minbase bookworm, nothing else installed), with a
# clean `git archive` of HEAD. Prints each command's exit status, time and last
# lines; exits non-zero when either fails. Takes about 15-30 minutes on 2 cores.
#
#   bash scripts/fresh-check.sh            # as root; needs debootstrap and network
#
# The base root is made once and kept in $RAMIEL_FRESH_CACHE (default
# /var/cache/ramiel-fresh-check/base); every run works on a new copy of it.
# Downloaded .deb files are kept between runs (only the download is saved:
# every package is still installed by the README's command). Full logs go to
# $RAMIEL_FRESH_CACHE/logs. Uncommitted changes are not part of the check.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
cache=${RAMIEL_FRESH_CACHE:-/var/cache/ramiel-fresh-check}
base=$cache/base
root=$cache/root
logs=$cache/logs

die() { echo "fresh-check: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "run as root (it uses debootstrap, chroot and mount)"
command -v debootstrap > /dev/null || die "debootstrap is missing: apt-get install debootstrap"
git -C "$repo" rev-parse HEAD > /dev/null 2>&1 || die "$repo is not a git checkout"

# The Debian mirror this machine's apt uses (no host is written into this script).
mirror_of_host() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' "$f"
  done
  [ -e /etc/apt/sources.list ] && awk '/^deb / && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list
  return 0
}
mirror=${RAMIEL_DEBIAN_MIRROR:-$(mirror_of_host | head -n 1)}
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt: set RAMIEL_DEBIAN_MIRROR"

mkdir -p "$cache" "$logs" "$cache/apt-archives/partial"
if [ ! -x "$base/bin/bash" ]; then
  echo "fresh-check: making the base root with debootstrap (once; kept in $base)"
  rm -rf "$base.tmp"
  debootstrap --variant=minbase bookworm "$base.tmp" "$mirror" > "$logs/debootstrap.log" 2>&1 ||
    die "debootstrap failed (see $logs/debootstrap.log)"
  mv "$base.tmp" "$base"
fi

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2> /dev/null || true
  done
}
trap cleanup EXIT
mount_into() {  # mount_into TARGET ARGS...
  local target=$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounted+=("$target")
}

echo "fresh-check: a new root from the base, HEAD $(git -C "$repo" rev-parse --short HEAD) in /src"
rm -rf "$root"
cp -a "$base" "$root"
# The same package sources as a Debian 12 install: the release, its updates and security.
if [ -e /etc/apt/sources.list.d/debian.sources ]; then
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
fi
# This machine's network: its name servers, and the certificate authorities it
# added locally (a network that inspects TLS needs them for npm's https).
cp /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" > /dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
mkdir -p "$root/src"
git -C "$repo" archive HEAD | tar -x -C "$root/src"
mount_into "$root/proc" -t proc proc
mount_into "$root/sys" -t sysfs sysfs
mount_into "$root/dev" --bind /dev
mount_into "$root/dev/pts" --bind /dev/pts
mount_into "$root/dev/shm" -t tmpfs tmpfs
mount_into "$root/var/cache/apt/archives" --bind "$cache/apt-archives"

# The README's two commands: the lines of its first ```sh block, comments dropped;
# the first runs the main job, the second the tests. The tests run first, then
# the main job (with no display: the CLI report).
mapfile -t readme < <(awk '/^```sh$/ {inside = 1; next} inside && /^```/ {exit} inside' README.md |
  sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d')
[ "${#readme[@]}" -eq 2 ] || die "README.md should start with a sh block of two commands, found ${#readme[@]}"
commands=("${readme[1]}" "${readme[0]}")

# A clean environment: no display (the run command then prints the CLI report).
# OPENBLAS_* describe this CPU (docs/toolchain.md), so they are passed on.
environment=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb)
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
  [ -n "${!v:-}" ] && environment+=("$v=${!v}")
done

status=0
summary=()
for i in "${!commands[@]}"; do
  command=${commands[i]}
  log=$logs/command-$((i + 1)).log
  echo "fresh-check: [$((i + 1))/2] $command"
  start=$(date +%s)
  set +e
  env -i "${environment[@]}" chroot "$root" /bin/bash -c "cd /src && $command" < /dev/null > "$log" 2>&1
  rc=$?
  set -e
  seconds=$(($(date +%s) - start))
  line="[$((i + 1))/2] $command: exit $rc, $((seconds / 60)) min $((seconds % 60)) s"
  summary+=("$line")
  echo "fresh-check: $line; last lines (full log $log):"
  tail -n 15 "$log" | sed 's/^/    /'
  [ "$rc" -eq 0 ] || status=1
done

echo "fresh-check: summary"
printf '  %s\n' "${summary[@]}"
if [ "$status" -eq 0 ]; then
  echo "fresh-check: passed: both README commands succeed on a fresh Debian 12 root"
else
  echo "fresh-check: FAILED"
fi
exit "$status"
