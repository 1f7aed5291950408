# shellcheck shell=bash
# Sourced by the benchmark scripts: the host's state as one line, from `ramiel
# calibrate --host --json` (load average, a cache line's round trip between the
# first two CPUs; docs/cli.md). `host_state RAMIEL DIR before` keeps the state in DIR;
# `host_state RAMIEL DIR after` adds the share of the CPUs' time the hypervisor took
# since then. Times from another hour compare only where these lines do.
host_state() {
  "$1" calibrate --host --json > "$2/host.$3"
  /usr/bin/python3 - "$2/host.$3" "$2/host.before" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))['host']
trip = h['round_trip_ns']
line = 'load average %.2f, ' % h['load_average']
line += 'round trip %.0f ns between CPUs %d and %d' % (trip, *h['round_trip_cpus']) if trip is not None else 'one CPU'
if sys.argv[1] != sys.argv[2] and h['cpu_seconds'] is not None:  # after: the hypervisor's share since before
    b = json.load(open(sys.argv[2]))['host']
    line += "; the hypervisor took %.1f %% of the CPUs' time in between" % (
        100 * (h['stolen_seconds'] - b['stolen_seconds']) / (h['cpu_seconds'] - b['cpu_seconds']))
print(line)
PY
}
