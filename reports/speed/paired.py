#!/usr/bin/env python3
"""Simulation time of two gpumemsim binaries on one `gpumemsim bench` row, paired: each round runs A
then B, and the ratio B/A is taken within the round, so that a shared machine's drift (which moves
both by up to 2x from one minute to the next) cancels. Prints each binary's median `wall_s` and the
median and range of the per-round ratios.

usage: paired.py A_BINARY B_BINARY [ROUNDS] [-- BENCH_ARGS...]
BENCH_ARGS default to `--only v70_distinct --repeat 3`; e.g. `-- --only v70_none --repeat 3 --threads 2`.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

args = sys.argv[1:]
extra = ["--only", "v70_distinct", "--repeat", "3"]
if "--" in args:
    extra = args[args.index("--") + 1 :]
    args = args[: args.index("--")]
a, b = args[0], args[1]
rounds = int(args[2]) if len(args) > 2 else 15


def wall(binary, out):
    argv = [binary, "bench", *extra, "--litmus-iterations", "0", "--json", out]
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(out) as f:
        return json.load(f)["rows"][0]["wall_s"]


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "bench.json")
    pairs = [(wall(a, out), wall(b, out)) for _ in range(rounds)]
ta = [x for x, _ in pairs]
tb = [y for _, y in pairs]
r = [y / x for x, y in pairs]
print(
    f"A median {statistics.median(ta) * 1e3:.2f} ms  B median {statistics.median(tb) * 1e3:.2f} ms  "
    f"B/A per round: median {statistics.median(r):.3f} [{min(r):.3f}, {max(r):.3f}]  n={rounds}"
)
