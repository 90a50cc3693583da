#!/usr/bin/env python3
"""Whole-process wall time of `gpumemsim run TRACE [ARGS]` for two binaries, paired: each round runs A
then B and takes the ratio B/A within the round (a shared machine's drift cancels). Unlike `paired.py`
(the bench's in-memory traces) this reads the trace from its file, as users run it.

usage: paired_run.py A B ROUNDS [TRACE] [-- ARGS...]   (TRACE defaults to ../shared/traces/v70_distinct)
"""
import statistics
import subprocess
import sys
import time

args = sys.argv[1:]
extra = []
if "--" in args:
    extra = args[args.index("--") + 1 :]
    args = args[: args.index("--")]
a, b, rounds = args[0], args[1], int(args[2])
trace = args[3] if len(args) > 3 else "../shared/traces/v70_distinct"


def wall(binary):
    t = time.perf_counter()
    argv = [binary, "run", trace, *extra]
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


pairs = [(wall(a), wall(b)) for _ in range(rounds)]
r = [y / x for x, y in pairs]
m = statistics.median
print(
    f"A median {m([x for x, _ in pairs]) * 1e3:.1f} ms  B median {m([y for _, y in pairs]) * 1e3:.1f} ms  "
    f"B/A per round: median {m(r):.3f} [{min(r):.3f}, {max(r):.3f}]  n={rounds}"
)
