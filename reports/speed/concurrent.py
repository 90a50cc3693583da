#!/usr/bin/env python3
"""What two threads can gain on this machine, against what they gain: per round, one one-thread
`gpumemsim run TRACE` alone, then two one-thread runs at once (independent processes: no shared
data), then one `--threads 2` run; prints the medians of each's wall time (whole processes).

If two runs at once take as long as one alone, the cores are independent for this workload; a two-thread
run slower than that bound loses to the data its threads share (or the machine moves them apart).

usage: concurrent.py BINARY ROUNDS [TRACE]   (TRACE defaults to ../shared/traces/v70_distinct)
"""
import statistics
import subprocess
import sys
import time

binary, rounds = sys.argv[1], int(sys.argv[2])
trace = sys.argv[3] if len(sys.argv) > 3 else "../shared/traces/v70_distinct"


def start(threads):
    argv = [binary, "run", trace, "--threads", str(threads)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


alone, pair, two = [], [], []
for _ in range(rounds):
    t = time.perf_counter()
    start(1).wait()
    alone.append(time.perf_counter() - t)
    t = time.perf_counter()
    p, q = start(1), start(1)
    p.wait()
    q.wait()
    pair.append(time.perf_counter() - t)
    t = time.perf_counter()
    start(2).wait()
    two.append(time.perf_counter() - t)
m = statistics.median
print(
    f"alone {m(alone) * 1e3:.1f} ms  two at once {m(pair) * 1e3:.1f} ms (x{m(pair) / m(alone):.3f})  "
    f"--threads 2 {m(two) * 1e3:.1f} ms (one thread / two: {m(alone) / m(two):.3f})"
)
