#!/usr/bin/python3
"""Times configurations in turns, each in a process of its own (the way `ramiel bench`
times its rows: core/pipeline/isolated_timing.h), for runtimes that speak the timing
workers' protocol: `ramiel time-worker REQUEST.json` and bench/ort_worker.js.

The workers load side by side (untimed), warm up one at a time, then take turns of
BLOCK timed runs (each turn starts with 0.1 s of untimed runs) until each has RUNS.
Turns last tens of milliseconds, so every configuration meets the same mix of the
host's states (on a cloud host, its vCPUs moved between cores that share a cache and
cores that do not for seconds at a time), which one process per configuration, one
after another, does not. With a probe command (`ramiel calibrate --host --json`), the
host's round trip is read before every cycle of turns and after the last.

Reads a JSON spec on stdin: {"runs": 20, "block": 3, "probe": [...] or null,
"workers": [{"name": "ort1", "command": [...], "warm": 3}, ...]}; prints
{"medians_ms": {name: ms}, "times_ms": {name: [...]}, "round_trips_ns": [...]}.
A worker that fails or says something else ends the timing with its name (exit 1).
"""
import json
import statistics
import subprocess
import sys


class Worker:
    def __init__(self, spec):
        self.name = spec['name']
        self.warm = int(spec.get('warm', 3))
        self.times = []
        self.process = subprocess.Popen(spec['command'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1)

    def expect(self, word):
        line = self.process.stdout.readline().strip()
        if not line.startswith(word):
            code = self.process.poll()
            sys.exit('turns: %s: expected "%s", got %s' % (
                self.name, word, repr(line) if line else 'nothing (exit %s)' % code))
        return line

    def ask(self, request, word):
        self.process.stdin.write(request + '\n')
        self.process.stdin.flush()
        return self.expect(word)

    def quit(self):
        try:
            self.process.stdin.write('quit\n')
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        self.process.wait()


def round_trip(probe):
    host = json.loads(subprocess.run(probe, check=True, capture_output=True, text=True).stdout)['host']
    return host['round_trip_ns']


def main():
    spec = json.load(sys.stdin)
    runs, block, probe = int(spec['runs']), int(spec.get('block', 3)), spec.get('probe')
    workers = [Worker(w) for w in spec['workers']]
    trips = []
    try:
        for w in workers:  # they load side by side
            w.expect('ready')
        for w in workers:  # then warm up one at a time
            w.ask('warm %d' % w.warm, 'warm')
        while any(len(w.times) < runs for w in workers):
            if probe:
                trips.append(round_trip(probe))
            for w in workers:
                k = min(block, runs - len(w.times))
                if k > 0:
                    w.times += [float(t) * 1e3 for t in w.ask('run %d' % k, 'times').split()[1:]]
        if probe:
            trips.append(round_trip(probe))
    finally:
        for w in workers:
            w.quit()
    print(json.dumps({'medians_ms': {w.name: statistics.median(w.times) for w in workers},
                      'times_ms': {w.name: w.times for w in workers},
                      'round_trips_ns': [t for t in trips if t is not None]}))


if __name__ == '__main__':
    main()
