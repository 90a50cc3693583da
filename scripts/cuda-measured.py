#!/usr/bin/env python3
"""CUDA timings as a measurement file, so that `gpumemsim compare` compares the simulator with CUDA.

Usage: scripts/cuda-measured.py MEASURED.json CUDA.jsonl OUT.json

MEASURED.json is a `gpumemsim measure` file of the same suite on the same device (the campaign's
measured.json): it gives the kernels' text, parameters and the slopes to fit. CUDA.jsonl is what
benches/cuda/micro.cu printed (scripts/cuda-micro.sh): its "suite" lines are the suite's chain, chase,
chase_dram, overhead and contention kernels written in CUDA. OUT.json keeps the benchmarks micro.cu
measured, with the CUDA times (median, min, max of 15 event-timed launches after 3 warm-ups) and its
result check, and drops the others and the litmus tests; the slopes are fitted again as `measure`
fits them (least squares over the cases' medians). The adapter's name says the numbers came from CUDA,
and no shader path is recorded.
"""
import json
import sys


def fit(points):
    n = len(points)
    if n < 2 or len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    icpt = my - slope * mx
    ss_tot = sum((y - my) ** 2 for _, y in points)
    ss_res = sum((y - (icpt + slope * x)) ** 2 for x, y in points)
    r2 = 1.0 if ss_tot == 0 else 1.0 - ss_res / ss_tot
    return slope, icpt, r2


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    template, jsonl, out = argv[1:]
    try:
        m = json.load(open(template))
        benches = m["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write(f"{template}: not a measurement file of `gpumemsim measure`: {e}\n")
        return 1
    cuda = {}
    device = None
    need = {"device": ["name"], "suite": ["bench", "case", "median_ns", "min_ns", "max_ns", "samples_ns", "ok"]}
    try:
        lines = open(jsonl).read().splitlines()
    except OSError as e:
        sys.stderr.write(f"{jsonl}: cannot read: {e}\n")
        return 1
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            sys.stderr.write(f"{jsonl}:{n}:{e.colno}: not JSON: {e.msg}\n")
            return 1
        kind = r.get("kind") if isinstance(r, dict) else None
        missing = [k for k in need.get(kind, []) if k not in r]
        if missing:
            sys.stderr.write(f"{jsonl}:{n}:1: a `{kind}` line without {', '.join(missing)}\n")
            return 1
        if kind == "device":
            device = r["name"]
        if kind == "suite":
            cuda[f"{r['bench']}[{r['case']}]"] = r
    if device is None:
        sys.stderr.write(f"{jsonl}: no `device` line (micro.cu prints it first)\n")
        return 1
    kept = []
    for b in benches:
        key = f"{b['bench']}[{b['case']}]"
        r = cuda.get(key)
        if r is None:
            continue
        b = dict(b)
        b["timing"] = {
            "median_ns": r["median_ns"],
            "min_ns": r["min_ns"],
            "max_ns": r["max_ns"],
            "samples_ns": r["samples_ns"],
        }
        b["status"] = "ok" if r["ok"] else "failed"
        b["error"] = None if r["ok"] else "the CUDA kernel's result check failed"
        b["checks"] = [
            {
                "text": "the CUDA version's result (benches/cuda/micro.cu)",
                "location": "benches/cuda/micro.cu",
                "passed": bool(r["ok"]),
                "detail": None,
            }
        ]
        b["emulated"] = []
        b.pop("shader", None)
        b.pop("clock", None)
        kept.append(b)
    if not kept:
        sys.stderr.write(f"{jsonl}: no suite case of {template} in it\n")
        return 1
    keys = {f"{b['bench']}[{b['case']}]": b for b in kept}
    derived = []
    for d in m.get("derived", []):
        if not all(c in keys for c in d["cases"]):
            continue
        pts = [(keys[c]["resolved"][d["x"]], keys[c]["timing"]["median_ns"]) for c in d["cases"]]
        f = fit(pts)
        if f is None:
            continue
        d = dict(d)
        d["slope_ns"], d["intercept_ns"], d["r2"] = f
        derived.append(d)
    m["benchmarks"] = kept
    m["derived"] = derived
    over = [b for b in kept if b["group"] == "overhead" and b["status"] == "ok"]
    m["overhead_ns"] = over[0]["timing"]["median_ns"] if over else None
    m["adapter"] = dict(m["adapter"])
    m["adapter"]["name"] = f"{device} (CUDA, benches/cuda/micro.cu)"
    m["adapter"]["backend"] = "cuda"
    m["litmus"] = []
    m["litmus_tests"] = {}
    m["litmus_settings"] = None
    m.pop("clock", None)
    used = {b["kernel"] for b in kept}
    m["kernels"] = {k: v for k, v in m["kernels"].items() if k in used}
    with open(out + ".tmp", "w") as f:
        json.dump(m, f, indent=1)
    import os

    os.replace(out + ".tmp", out)
    print(f"wrote {out}: {len(kept)} cases, {len(derived)} slopes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
