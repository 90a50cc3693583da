"""gpumemsim from Python: the CLI's jobs as functions, results as pandas DataFrames.

``run``, ``litmus``, ``model``, ``sweep``, ``validate`` and ``config`` mirror the commands of the same
names, with their defaults, and give the same answers: each result's ``to_json()`` is byte for byte
what the command's ``--json`` writes for the same inputs and seed. The simulator is the Rust library
itself (``gpumemsim._native``, built by maturin from ``sim/python``); nothing here simulates.

Long calls release the GIL, show progress (a tqdm bar when tqdm is installed, else plain lines on
stderr) and stop on Ctrl-C or a Jupyter interrupt with ``KeyboardInterrupt``. Errors raise
``gpumemsim.Error`` with the CLI's message (``file:line:col``, or the key, the value and what is
allowed). See docs/python.md.
"""

import json
import os

import pandas as pd

from . import _native
from . import config
from . import config as _config  # the module, where a `config` argument hides its name
from ._progress import reporter

Error = _native.Error
#: The simulator build (version + source hash) that stamps sweep results, as ``gpumemsim --version``.
BUILD = _native.BUILD

__all__ = [
    "Error",
    "BUILD",
    "run",
    "litmus",
    "model",
    "sweep",
    "validate",
    "config",
    "RunResult",
    "LitmusResult",
    "ModelResult",
    "ValidateResult",
]


def _paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


def _params(params):
    if params is None:
        return []
    items = params.items() if isinstance(params, dict) else params
    out = []
    for k, v in items:
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise TypeError(f"params[{k!r}] = {v!r}: a workload parameter is an integer")
        out.append((str(k), v if isinstance(v, int) else int(v.replace("_", ""), 0)))
    return out


def _call(fn, label, what, progress, **kw):
    cb, close = reporter(progress, label, what)
    try:
        return fn(progress=cb, **kw)
    finally:
        close()


class RunResult:
    """One run (``gpumemsim run``): cycles, checks, statistics, reported quantities, races."""

    def __init__(self, native):
        self._json = native["json"]
        self._stats_json = native["stats_json"]
        self._csv = native["csv"]
        self.summary = native["summary"]
        doc = json.loads(self._json)
        self.document = doc
        self.cycles = doc["cycles"]
        self.time_ns = doc["time_ns"]
        #: ``[{text, location, passed, detail}]``, one per ``check`` of the workload.
        self.checks = doc["checks"]
        #: ``{NAME: value}`` of the workload's ``report`` lines.
        self.reports = doc["reports"]
        self.races = doc["races"]
        self.parameters = doc["parameters"]
        self.seed = doc["seed"]
        self.config = doc["config"]
        self.workload = doc["workload"]
        self._stats = None

    @property
    def failed_checks(self):
        return [c for c in self.checks if not c["passed"]]

    @property
    def stats(self):
        """Every statistic as a tidy DataFrame: ``location, metric, value, unit``."""
        if self._stats is None:
            self._stats = pd.DataFrame.from_records(
                json.loads(self._stats_json), columns=["location", "metric", "value", "unit"]
            )
        return self._stats

    def stat(self, location, metric):
        """One statistic's value, e.g. ``r.stat("l2", "hit_rate")``."""
        s = self.stats
        hit = s[(s.location == location) & (s.metric == metric)]
        if hit.empty:
            raise KeyError(f"no statistic {location}.{metric}")
        return float(hit.value.iloc[0])

    def to_json(self):
        """The run as ``gpumemsim run --json`` writes it (schema ``gpumemsim.run``)."""
        return self._json

    def stats_json(self):
        """The statistics as ``--stats-json`` writes them."""
        return self._stats_json

    def to_csv(self):
        """The statistics as ``--csv`` writes them."""
        return self._csv

    def __repr__(self):
        failed = len(self.failed_checks)
        return (
            f"<RunResult {self.workload} on {self.config}, seed {self.seed}: {self.cycles} cycles, "
            f"{len(self.checks) - failed}/{len(self.checks)} checks passed>"
        )


def run(workload, config=None, set=None, params=None, seed=0, threads=1, races=False, progress=True):
    """Runs a workload (``gpumemsim run``): a kernel file (``.kern``, ``.cu``, ``.cl``) or an
    Accel-Sim trace (``kernelslist.g`` or its folder).

    ``config``: a preset's name (default: the embedded H100) or a TOML file; ``set``: config overrides
    ``{"l2.slices": 8}``; ``params``: the workload's parameters ``{"N": 4096}``. Results do not depend
    on ``threads``. A failed check does not raise: see ``result.failed_checks``.
    """
    native = _call(
        _native.run,
        "run --races" if races else "run",
        "work-groups",
        progress,
        workload=os.fspath(workload),
        config=None if config is None else os.fspath(config),
        sets=_config.sets(set),
        params=_params(params),
        seed=seed,
        threads=threads,
        races=races,
    )
    return RunResult(native)


class LitmusResult:
    """Litmus tests (``gpumemsim litmus``): per test its verdict, per final state its count."""

    def __init__(self, native):
        self._json = native["json"]
        #: One dict per test, as in ``--json``.
        self.tests = json.loads(self._json)
        self.reports = list(native["reports"])
        #: ``[(test, why)]`` for tests that need a machine capability the config lacks.
        self.skipped = [tuple(s) for s in native["skipped"]]
        self.summary = native["summary"]
        self.failed = native["failed"]

    @property
    def table(self):
        """One row per test: name, iterations, witnesses, check, the model's status."""
        cols = [
            "name", "file", "iterations", "quantifier", "condition", "witnesses", "validated",
            "expectation", "check", "model_status", "allowed_seen",
        ]
        return pd.DataFrame.from_records([{c: t[c] for c in cols} for t in self.tests], columns=cols)

    @property
    def outcomes(self):
        """One row per test and observed final state: ``test, state, count, first_launch, model``
        (``model``: allowed / forbidden / unknown / undefined by the oracle, or None)."""
        rows = [
            {"test": t["name"], **{k: o[k] for k in ("state", "count", "first_launch", "model")}}
            for t in self.tests
            for o in t["outcomes"]
        ]
        return pd.DataFrame.from_records(
            rows, columns=["test", "state", "count", "first_launch", "model"]
        )

    def histogram(self, test=None, ax=None, log=True):
        """A bar chart of one test's final states and their counts (matplotlib), forbidden states
        in red. ``test``: its name (default: the first)."""
        import matplotlib.pyplot as plt

        o = self.outcomes
        name = test if test is not None else self.tests[0]["name"]
        o = o[o.test == name]
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 3.5))
        colors = ["tab:red" if m == "forbidden" else "tab:blue" for m in o.model]
        ax.bar(range(len(o)), o["count"], color=colors)
        ax.set_xticks(range(len(o)))
        ax.set_xticklabels(o.state, rotation=20, ha="right", fontsize=8)
        if log:
            ax.set_yscale("log")
        ax.set_ylabel("iterations")
        ax.set_title(name)
        return ax

    def to_json(self):
        """The tests as ``gpumemsim litmus --json`` writes them."""
        return self._json

    def __str__(self):
        return "\n".join(self.reports + [self.summary])

    def __repr__(self):
        return f"<LitmusResult {len(self.tests)} tests: {self.summary}>"


def litmus(
    paths,
    config=None,
    set=None,
    iterations=10_000,
    seed=0,
    races=False,
    expect=None,
    instances=None,
    serial=False,
    unroll=4,
    progress=True,
):
    """Runs litmus tests (``gpumemsim litmus``): files, or folders searched for ``*.litmus``.

    Defaults as the CLI's: 10,000 iterations, seed 0, the embedded H100 config, the oracle's bound 4.
    """
    native = _call(
        _native.litmus,
        "litmus",
        "iterations",
        progress,
        paths=_paths(paths),
        config=None if config is None else os.fspath(config),
        sets=_config.sets(set),
        iterations=iterations,
        seed=seed,
        races=races,
        expect=None if expect is None else os.fspath(expect),
        instances=instances,
        serial=serial,
        unroll=unroll,
    )
    return LitmusResult(native)


class ModelResult:
    """The oracle's decisions (``gpumemsim model``)."""

    def __init__(self, native):
        self._json = native["json"]
        self.decisions = json.loads(self._json)
        self.reports = list(native["reports"])

    @property
    def table(self):
        """One row per test: the model, verdict, executions, bound hit, race, expectation."""
        cols = [
            "name", "file", "model", "verdict", "executions", "bound_hit", "race", "expectation",
            "expectation_agrees", "error",
        ]
        rows = []
        for d in self.decisions:
            row = {c: d[c] for c in cols}
            row["allowed_states"] = None if d["allowed"] is None else len(d["allowed"])
            rows.append(row)
        return pd.DataFrame.from_records(rows, columns=cols + ["allowed_states"])

    @property
    def allowed(self):
        """One row per test and final state the model allows: ``test, state``."""
        rows = [{"test": d["name"], "state": s} for d in self.decisions for s in d["allowed"] or []]
        return pd.DataFrame.from_records(rows, columns=["test", "state"])

    def to_json(self):
        """The decisions as ``gpumemsim model --json`` writes them."""
        return self._json

    def __str__(self):
        return "\n".join(self.reports)


def model(paths, unroll=4, progress=True):
    """The memory model's allowed final states and verdict for litmus tests (``gpumemsim model``)."""
    return ModelResult(_call(_native.model, "model", "tests", progress, paths=_paths(paths), unroll=unroll))


def sweep(spec, out=None, jobs=None, retry_failed=False, mix_builds=False, base_dir=None, progress=True):
    """Runs a parameter sweep (``gpumemsim sweep SPEC``) and returns its results as a DataFrame: one
    row per point, the parameters, ``status``, and every statistic as ``location.metric``.

    ``spec``: a spec file's path, or the spec as a dict (the TOML's tables as dicts, ``workload`` and
    ``chart`` as lists of dicts), its relative paths taken from ``base_dir`` (default: the current
    folder). ``out``: the output folder (default for a file: the spec's path without ``.toml``; a dict
    needs one). The folder holds what the CLI writes (``results.csv``, charts, ``index.html``); a rerun
    resumes from the points already there. ``df.attrs`` has ``out``, ``failed``, ``ran`` and
    ``warnings``.
    """
    kw = dict(out=None if out is None else os.fspath(out), jobs=jobs, retry_failed=retry_failed,
              mix_builds=mix_builds)
    if isinstance(spec, dict):
        kw.update(spec_json=json.dumps(spec), base_dir=os.fspath(base_dir or os.getcwd()))
    else:
        kw.update(spec=os.fspath(spec))
    r = _call(_native.sweep_run, "sweep", "points", progress, **kw)
    with open(os.path.join(r["out"], "results.json"), encoding="utf-8") as f:
        df = pd.DataFrame.from_records(json.load(f))
    df.attrs.update(
        out=r["out"], rows=r["rows"], failed=r["failed"], ran=r["ran"],
        already_done=r["already_done"], warnings=list(r["warnings"]),
        chart_errors=list(r["chart_errors"]),
    )
    return df


class ValidateResult:
    """The presets against published hardware numbers (``gpumemsim validate``)."""

    def __init__(self, native):
        self._json = native["json"]
        self.presets = json.loads(self._json)
        self.tables = list(native["tables"])
        self.passed = native["passed"]

    @property
    def rows(self):
        """One row per measurement: preset, id, quantity, unit, published, simulated, signed error
        (positive: the simulator is too slow), tolerance, within."""
        return pd.DataFrame.from_records([r for p in self.presets for r in p["rows"]])

    @property
    def summary(self):
        """One row per preset: its MAPE against the target."""
        return pd.DataFrame.from_records(
            [
                {"preset": p["preset"], "config": p["config"], "mape": p["mape"],
                 "mape_target": p["mape_target"]}
                for p in self.presets
            ]
        )

    def to_json(self):
        """The results as ``gpumemsim validate --out DIR`` writes them into ``results.json``."""
        return self._json

    def __str__(self):
        return "".join(self.tables)


def validate(config=None, reference="reports/reference", out=None, threads=2, progress=True):
    """Checks the presets (or ``config``, against its base preset's set) against the reference
    measurements in ``reference`` (``gpumemsim validate``); with ``out``, writes the CLI's files."""
    native = _call(
        _native.validate_run,
        "validate",
        "presets",
        progress,
        config=None if config is None else os.fspath(config),
        reference=os.fspath(reference),
        out=None if out is None else os.fspath(out),
        threads=threads,
    )
    return ValidateResult(native)

