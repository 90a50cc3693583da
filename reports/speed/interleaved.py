#!/usr/bin/env python3
"""Whole-process wall times of two gpumemsim binaries, run for run interleaved, so that a shared
machine's drift hits both alike.

usage: interleaved.py OLD_BINARY NEW_BINARY TRACES_DIR [RUNS]
TRACES_DIR holds the sample traces (v70_distinct, v70_same_i8). Prints the fastest and the median."""
import statistics
import subprocess
import sys
import time

old, new, traces = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 15
cases = [
    ("old v70_distinct 1 thread", old, ["v70_distinct"]),
    ("new v70_distinct 1 thread", new, ["v70_distinct"]),
    ("new v70_distinct 2 threads", new, ["v70_distinct", "--threads", "2"]),
    ("old v70_distinct 2 threads", old, ["v70_distinct", "--threads", "2"]),
    ("old v70_same_i8 1 thread", old, ["v70_same_i8"]),
    ("new v70_same_i8 1 thread", new, ["v70_same_i8"]),
]
times = {name: [] for name, _, _ in cases}
for _ in range(runs):
    for name, binary, args in cases:
        argv = [binary, "run", f"{traces}/{args[0]}", *args[1:]]
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[name].append(time.perf_counter() - t)
for name, v in times.items():
    print(f"{name:28s} fastest {min(v):.3f} s  median {statistics.median(v):.3f} s")
