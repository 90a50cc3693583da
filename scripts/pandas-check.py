#!/usr/bin/env python3
"""Reads gpumemsim's tables with pandas exactly as a user would, and checks what it gets.

    scripts/pandas-check.py --stats RUN.stats.json --run RUN.json --sweep SWEEP_DIR --compare CMP_DIR

--stats    `run --stats-json` output: pandas.read_json gives location, metric, value, unit
--run      `run --json` output (a document): pandas.json_normalize gives one row, parameters as columns
--sweep    a sweep output folder: results.json read as it is matches results.csv, row for row, and
           every column is described (with its unit) in results.schema.json
--compare  a `compare --out` folder: comparison.json read as it is matches comparison.csv

Exit status 0 when every given output reads as described, 1 otherwise. Needs pandas
(`pip install pandas`); `cargo test --test integration outputs_read_by_pandas -- --ignored` runs it
on fresh outputs.
"""
import argparse
import json
import sys

import pandas as pd


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def stats(path):
    df = pd.read_json(path)
    check(list(df.columns) == ["location", "metric", "value", "unit"], f"{path}: columns {list(df.columns)}")
    check(len(df) > 0, f"{path}: no rows")
    cycles = df[(df.location == "kernel") & (df.metric == "cycles")]
    check(len(cycles) == 1 and cycles.unit.iloc[0] == "cycles", f"{path}: kernel.cycles row")
    return f"{len(df)} statistics"


def run(path):
    doc = json.load(open(path))
    check(doc["schema"] == "gpumemsim-run" and doc["version"] == 3, f"{path}: schema {doc.get('schema')} {doc.get('version')}")
    flat = pd.json_normalize(doc)
    check(len(flat) == 1, f"{path}: json_normalize rows")
    for name in doc["parameters"]:
        check(f"parameters.{name}" in flat.columns, f"{path}: parameters.{name}")
    rows = pd.json_normalize(doc, "stats")
    check(len(rows) == len(doc["stats"]), f"{path}: stats rows")
    return f"1 run, {len(doc['parameters'])} parameters, {len(rows)} statistics"


def sweep(d):
    js = pd.read_json(f"{d}/results.json")
    csv = pd.read_csv(f"{d}/results.csv")
    schema = json.load(open(f"{d}/results.schema.json"))
    check(schema["schema"] == "gpumemsim-sweep-results" and schema["version"] == 2, f"{d}: schema")
    names = [c["name"] for c in schema["columns"]]
    check(list(csv.columns) == names, f"{d}: CSV header against results.schema.json")
    check(set(js.columns) <= set(names), f"{d}: JSON columns not in the schema: {set(js.columns) - set(names)}")
    check(len(js) == len(csv), f"{d}: {len(js)} JSON rows, {len(csv)} CSV rows")
    check(list(js.point) == list(csv.point), f"{d}: points in the same order")
    units = pd.DataFrame(schema["columns"]).set_index("name")["unit"]
    check(units["seed"] == "" and all(isinstance(u, str) for u in units), f"{d}: units")
    if "kernel.cycles" in units:
        check(units["kernel.cycles"] == "cycles", f"{d}: unit of kernel.cycles")
    for c in js.columns:
        if pd.api.types.is_numeric_dtype(js[c]) and c in csv.columns:
            a, b = js[c].astype(float), csv[c].astype(float)
            same = ((a - b).abs() <= 1e-9 * b.abs().clip(lower=1)) | (a.isna() & b.isna())
            check(same.all(), f"{d}: column {c} differs between results.json and results.csv")
    return f"{len(js)} runs x {len(js.columns)} columns"


def compare(d):
    js = pd.read_json(f"{d}/comparison.json")
    csv = pd.read_csv(f"{d}/comparison.csv")
    check(len(js) == len(csv), f"{d}: {len(js)} JSON cases, {len(csv)} CSV rows")
    check(list(js.case) == list(csv.case.fillna("")), f"{d}: cases in the same order")
    check((js.simulated_ns - csv.simulated_ns).abs().max() <= 1e-6, f"{d}: simulated_ns")
    summary = json.load(open(f"{d}/comparison.summary.json"))
    check(summary["schema"] == "gpumemsim-comparison" and summary["version"] == 2, f"{d}: summary schema")
    check(summary["cases"] == len(js), f"{d}: summary case count")
    return f"{len(js)} cases"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stats", action="append", default=[])
    p.add_argument("--run", action="append", default=[])
    p.add_argument("--sweep", action="append", default=[])
    p.add_argument("--compare", action="append", default=[])
    a = p.parse_args()
    failed = False
    for fn, paths in [(stats, a.stats), (run, a.run), (sweep, a.sweep), (compare, a.compare)]:
        for path in paths:
            try:
                print(f"ok   {fn.__name__:<8} {path}: {fn(path)}")
            except Exception as e:  # noqa: BLE001 - every failure is reported the same way
                failed = True
                print(f"FAIL {fn.__name__:<8} {path}: {type(e).__name__}: {e}")
    print(f"pandas {pd.__version__}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
