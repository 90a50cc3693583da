#!/usr/bin/env python3
"""Draws a gpumemsim timeline (run --timeline FILE.json) as one PNG, for a quick look without Perfetto:
warp states per SM and warp slot (the busiest SMs), the memory requests' stages (one row per request,
the first ones in time), and the counters. Needs matplotlib (not a dependency of the simulator).

    python3 scripts/timeline-png.py t.json t.png [--sms 4] [--requests 60]
"""
import argparse
import json
import sys
from collections import defaultdict

p = argparse.ArgumentParser()
p.add_argument("json")
p.add_argument("png")
p.add_argument("--sms", type=int, default=4)
p.add_argument("--requests", type=int, default=60)
a = p.parse_args()

try:
    import matplotlib
except ImportError:
    sys.exit(
        "timeline-png.py needs matplotlib, which is not installed for this python3: install it with "
        "`apt-get install python3-matplotlib` or `pip install matplotlib` (or open the timeline JSON in "
        "https://ui.perfetto.dev, which needs nothing)"
    )
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

try:
    with open(a.json) as f:
        evs = json.load(f)["traceEvents"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"{a.json}: not a gpumemsim timeline (run --timeline FILE.json writes one): {e}")

pname = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
warps = defaultdict(list)
for e in evs:
    if e["ph"] == "X":
        warps[(e["pid"], e["tid"])].append((e["ts"], e["dur"], e["name"]))
busy = defaultdict(float)
for (pid, _), spans in warps.items():
    busy[pid] += sum(d for _, d, n in spans if n == "issue")
sms = sorted(busy, key=lambda p: -busy[p])[: a.sms]
rows = sorted(k for k in warps if k[0] in sms)

# Requests: b/e pairs per (cat, id), in order; a request is a depth-0 span with its nested stages.
open_ = defaultdict(list)
reqs = []
for e in evs:
    if e["ph"] == "b":
        open_[(e["cat"], e["id"])].append(e)
    elif e["ph"] == "e":
        b = open_[(e["cat"], e["id"])].pop()
        depth = len(open_[(e["cat"], e["id"])])
        reqs.append((b["cat"], b["id"], b["ts"], e["ts"] - b["ts"], b["name"], depth))
tops = sorted([r for r in reqs if r[5] == 0 and r[0] in ("request", "store")], key=lambda r: r[2])
tops = tops[: a.requests]

counters = defaultdict(list)
for e in evs:
    if e["ph"] == "C":
        counters[e["name"]].append((e["ts"], list(e["args"].values())[0]))

colors = {}
palette = plt.get_cmap("tab20").colors
def col(name):
    key = name.split(" 0x")[0]
    for pre in ("crossbar", "port queue", "L2 slice", "read", "write", "atomic 0x", "store 0x"):
        if key.startswith(pre):
            key = pre
    if key not in colors:
        colors[key] = palette[len(colors) % len(palette)]
    return colors[key]

fig, axes = plt.subplots(3, 1, figsize=(16, 14), sharex=True,
                         gridspec_kw={"height_ratios": [max(3, len(rows) * 0.18), max(3, len(tops) * 0.12), 3]})
ax = axes[0]
for i, k in enumerate(rows):
    for ts, dur, name in warps[k]:
        ax.broken_barh([(ts, dur)], (i - 0.4, 0.8), color=col(name), label=name)
ax.set_yticks(range(len(rows)))
ax.set_yticklabels([f"{pname.get(p, p)} w{t}" for p, t in rows], fontsize=6)
ax.set_title("warp states (busiest SMs)")
h, l = ax.get_legend_handles_labels()
uniq = dict(zip(l, h))
ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper right")

ax = axes[1]
ids = {}
for r in tops:
    ids[(r[0], r[1], r[2])] = len(ids)
for cat, id_, ts, dur, name, depth in reqs:
    # Stages belong to the top span of their id that contains them.
    for (c2, i2, t2), row in ids.items():
        if c2 == cat and i2 == id_ and t2 <= ts and depth > 0:
            top = next(r for r in tops if (r[0], r[1], r[2]) == (c2, i2, t2))
            if ts + dur <= top[2] + top[3] + 1e-9:
                h = 0.8 if depth == 1 else 0.4
                ax.broken_barh([(ts, dur)], (row - h / 2, h), color=col(name), label=name.split(" (")[0].split(" 0x")[0])
    if depth == 0 and (cat, id_, ts) in ids:
        ax.broken_barh([(ts, dur)], (ids[(cat, id_, ts)] - 0.45, 0.9), facecolor="none", edgecolor="black", linewidth=0.4)
ax.set_yticks(range(len(tops)))
ax.set_yticklabels([f"{r[4]}" for r in tops], fontsize=5)
ax.set_title(f"memory requests and stores (first {len(tops)}; stages nested)")
h, l = ax.get_legend_handles_labels()
uniq = dict(zip(l, h))
ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper right")

ax = axes[2]
for name, pts in counters.items():
    if name.startswith("store buffer entries") or name.startswith("atomic queue"):
        continue
    xs, ys = zip(*pts)
    ax.step(xs, ys, where="post", label=name)
aq = defaultdict(float)
for name, pts in counters.items():
    if name.startswith("atomic queue"):
        for t, v in pts:
            aq[t] = max(aq[t], v)
if aq:
    xs = sorted(aq)
    ax.step(xs, [aq[x] for x in xs], where="post", label="atomic queue (busiest slice at each change)")
ax.set_yscale("symlog")
ax.legend(fontsize=7)
ax.set_title("counters")
ax.set_xlabel("core cycle")
fig.tight_layout()
fig.savefig(a.png, dpi=90)
