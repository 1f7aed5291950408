# shellcheck shell=bash
# Sourced by the benchmark scripts: the host's state around a timing, in the words of
# `ramiel bench`'s host line (core's describeHostAround; docs/cli.md).
# `host_state RAMIEL DIR before` keeps the state in DIR (`ramiel calibrate --host --json`);
# `host_state RAMIEL DIR after` prints "host: 2 CPUs; before, ...; after, ...; the
# hypervisor took ..." (`calibrate --host --since`), which also says whether the round
# trip moved in between. Times from another hour compare only where these lines do.
host_state() {
  case "$3" in
    before) "$1" calibrate --host --json > "$2/host.before" ;;
    after) "$1" calibrate --host --since "$2/host.before" ;;
    *) echo "host_state: before or after, not '$3'" >&2; return 2 ;;
  esac
}
