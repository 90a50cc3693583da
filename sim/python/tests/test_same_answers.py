"""Every function of the package against the CLI's output for the same inputs and seed: byte for
byte where the CLI writes the same form (JSON documents, CSV, printed reports), value for value for
the DataFrames built from them."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest

import gpumemsim

KERNEL = "workloads/contention.kern"
LITMUS = ["workloads/litmus/ptx/mp_relaxed_gpu.litmus", "workloads/litmus/ptx/sb_relaxed_gpu.litmus"]


def test_run_gives_the_cli_documents_byte_for_byte(cli, tmp_path):
    args = ["--set", "l2.slices=50", "--param", "T=2048", "--param", "K=16", "--seed", "7"]
    p = cli("run", KERNEL, *args, "--json", tmp_path / "run.json", "--csv", tmp_path / "s.csv",
            "--stats-json", tmp_path / "s.json")
    r = gpumemsim.run(KERNEL, set={"l2.slices": 50}, params={"T": 2048, "K": 16}, seed=7)
    assert r.to_json() == (tmp_path / "run.json").read_text()
    assert r.to_csv() == (tmp_path / "s.csv").read_text()
    assert r.stats_json() == (tmp_path / "s.json").read_text()
    assert r.summary == p.stdout
    doc = json.loads((tmp_path / "run.json").read_text())
    assert r.cycles == doc["cycles"] > 0
    assert r.parameters["T"] == 2048 and r.parameters["K"] == 16
    assert r.checks == doc["checks"] and all(c["passed"] for c in r.checks)
    # The tidy DataFrame holds exactly the CSV's rows.
    assert list(r.stats.columns) == ["location", "metric", "value", "unit"]
    csv = pd.read_csv(io.StringIO(r.to_csv()), keep_default_na=False)
    pd.testing.assert_frame_equal(r.stats, csv, check_dtype=False)
    assert r.stat("kernel", "cycles") == r.cycles


def test_run_results_do_not_depend_on_threads():
    one = gpumemsim.run(KERNEL, params={"T": 4096, "K": 4}, seed=3, threads=1, progress=False)
    two = gpumemsim.run(KERNEL, params={"T": 4096, "K": 4}, seed=3, threads=2, progress=False)
    assert one.to_json() == two.to_json()


def test_run_on_a_config_file_and_a_preset_by_name(cli, tmp_path):
    cli("run", KERNEL, "--config", "configs/tiny.toml", "--json", tmp_path / "t.json")
    assert gpumemsim.run(KERNEL, config="configs/tiny.toml").to_json() == (tmp_path / "t.json").read_text()
    # A preset by name is the embedded preset: the same run as its file, named as embedded.
    by_name = json.loads(gpumemsim.run(KERNEL, config="tiny").to_json())
    by_file = json.loads((tmp_path / "t.json").read_text())
    assert by_name["config"] == "configs/tiny.toml (embedded)"
    assert {**by_name, "config": None} == {**by_file, "config": None}
    # "h100" is the default, what the CLI runs without --config.
    assert gpumemsim.run(KERNEL, config="h100").to_json() == gpumemsim.run(KERNEL).to_json()


def test_run_errors_carry_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.kern"
    bad.write_text("groups 1\ngroup_size 32\nkernel k {\n    frobnicate.u32 %r, 1\n}\n")
    p = cli("run", bad, ok=(1,))
    with pytest.raises(gpumemsim.Error) as e:
        gpumemsim.run(bad)
    assert "error: " + str(e.value) + "\n" == p.stderr
    assert f"{bad}:4:" in str(e.value)
    p = cli("run", KERNEL, "--set", "l2.ways=0", ok=(1,))
    with pytest.raises(gpumemsim.Error) as e:
        gpumemsim.run(KERNEL, set={"l2.ways": 0})
    assert "error: " + str(e.value) + "\n" == p.stderr
    assert "l2.ways" in str(e.value)
    with pytest.raises(gpumemsim.Error, match="no such preset"):
        gpumemsim.run(KERNEL, config="h200")
    with pytest.raises(ValueError):
        gpumemsim.run(KERNEL, threads=0)


def test_litmus_gives_the_cli_json_and_outcome_tables(cli, tmp_path):
    p = cli("litmus", *LITMUS, "--iterations", 300, "--seed", 5, "--json", tmp_path / "l.json")
    r = gpumemsim.litmus(LITMUS, iterations=300, seed=5)
    assert r.to_json() == (tmp_path / "l.json").read_text()
    assert p.stdout == "\n".join(r.reports) + "\n" + r.summary + "\n"
    assert list(r.table.name) == [t["name"] for t in json.loads(r.to_json())]
    o = r.outcomes
    assert set(o.test) == set(r.table.name)
    # Every iteration ends in exactly one final state.
    assert all(n == 300 for n in o.groupby("test")["count"].sum())
    assert "forbidden" not in set(o.model)


def test_litmus_default_seed_and_config_are_the_clis(cli, tmp_path):
    cli("litmus", LITMUS[0], "--iterations", 100, "--set", "stress.drain_jitter=40",
        "--json", tmp_path / "l.json")
    r = gpumemsim.litmus(LITMUS[0], iterations=100, set={"stress.drain_jitter": 40})
    assert r.to_json() == (tmp_path / "l.json").read_text()


def test_model_gives_the_cli_json(cli, tmp_path):
    p = cli("model", *LITMUS, "--json", tmp_path / "m.json")
    r = gpumemsim.model(LITMUS)
    assert r.to_json() == (tmp_path / "m.json").read_text()
    # The CLI prints each decision, then a summary with timings (not compared).
    assert p.stdout.startswith("\n".join(r.reports))
    assert list(r.table.name) == [d["name"] for d in r.decisions]
    assert len(r.allowed) == sum(len(d["allowed"]) for d in r.decisions)


def test_litmus_and_model_errors_name_the_line(cli, tmp_path):
    bad = tmp_path / "bad.litmus"
    bad.write_text("PTX bad\n{ x = 0; }\n P0 ;\n frobnicate x, 1 ;\nexists (x = 1)\n")
    p = cli("model", bad, ok=(1,))
    with pytest.raises(gpumemsim.Error) as e:
        gpumemsim.model(bad)
    assert "error: " + str(e.value) + "\n" == p.stderr
    assert str(bad) + ":" in str(e.value)
    with pytest.raises(gpumemsim.Error) as e2:
        gpumemsim.litmus(bad)
    assert str(e2.value) == str(e.value)


SPEC = """name = "python parity"
seeds = [1, 2]

[params]
"l2.slices" = [50, 100]

[[workload]]
name = "contention"
kernel = "{kernel}"
params = {{ T = 2048, K = 8 }}

[[chart]]
name = "cycles"
x = "l2.slices"
y = "kernel.cycles"
series = ["workload"]
"""


def test_sweep_gives_the_cli_results_from_a_file_and_from_a_dict(cli, tmp_path):
    kernel = str(Path(KERNEL).resolve())
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(kernel=kernel))
    cli("sweep", spec, "--out", tmp_path / "cli", "--jobs", 2)
    df = gpumemsim.sweep(spec, out=tmp_path / "py", jobs=2)
    for f in ["results.json", "results.csv", "sweep.json"]:
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    assert (tmp_path / "py" / "charts" / "cycles.png").is_file()
    assert len(df) == 4 and set(df["l2.slices"]) == {50, 100} and set(df.seed) == {1, 2}
    assert (df.status == "ok").all()
    expect = pd.DataFrame.from_records(json.loads((tmp_path / "cli" / "results.json").read_text()))
    pd.testing.assert_frame_equal(df, expect)
    assert df.attrs["ran"] == 4 and df.attrs["failed"] == 0
    as_dict = {
        "name": "python parity",
        "seeds": [1, 2],
        "params": {"l2.slices": [50, 100]},
        "workload": [{"name": "contention", "kernel": kernel, "params": {"T": 2048, "K": 8}}],
        "chart": [{"name": "cycles", "x": "l2.slices", "y": "kernel.cycles", "series": ["workload"]}],
    }
    d = gpumemsim.sweep(as_dict, out=tmp_path / "dict", progress=False)
    assert (tmp_path / "dict" / "results.json").read_bytes() == (tmp_path / "cli" / "results.json").read_bytes()
    pd.testing.assert_frame_equal(d, df)
    # A rerun resumes: nothing left to run.
    again = gpumemsim.sweep(spec, out=tmp_path / "py", progress=False)
    assert again.attrs["ran"] == 0 and again.attrs["already_done"] == 4


def test_sweep_spec_errors_carry_the_cli_message(cli, tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(SPEC.format(kernel=Path(KERNEL).resolve()).replace('"l2.slices"', '"l2.slicez"'))
    p = cli("sweep", spec, "--out", tmp_path / "o", ok=(1,))
    with pytest.raises(gpumemsim.Error) as e:
        gpumemsim.sweep(spec, out=tmp_path / "o2")
    assert "error: " + str(e.value) + "\n" == p.stderr
    assert "l2.slicez" in str(e.value)


def test_config_functions_match_the_cli(cli, tmp_path):
    assert gpumemsim.config.show() == cli("config", "show").stdout
    assert gpumemsim.config.show("configs/tiny.toml", set={"l2.slices": 2}) == cli(
        "config", "show", "configs/tiny.toml", "--set", "l2.slices=2").stdout
    assert gpumemsim.config.doc() == cli("config", "doc").stdout
    assert gpumemsim.config.doc(markdown=True) == cli("config", "doc", "--markdown").stdout
    h100 = gpumemsim.config.preset("h100")
    assert h100["l2"]["slices"] == 100 and h100 == gpumemsim.config.resolve()
    assert gpumemsim.config.preset("tiny") == gpumemsim.config.resolve("configs/tiny.toml")
    assert gpumemsim.config.resolve(set={"l2.slices": 50})["l2"]["slices"] == 50
    assert set(gpumemsim.config.presets()) >= {"h100", "a100", "v100", "tiny", "stress"}
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "h100"\n[l2]\nways = 0\n')
    p = cli("config", "check", "configs/tiny.toml", bad, ok=(1,))
    checked = gpumemsim.config.check("configs/tiny.toml", bad)
    assert checked["configs/tiny.toml"] is None
    assert checked[str(bad)] + "\n" == p.stderr
    assert f"{bad}:3:" in checked[str(bad)]
    with pytest.raises(gpumemsim.Error) as e:
        gpumemsim.config.show(bad)
    assert str(e.value) == checked[str(bad)]


def test_validate_gives_the_cli_results(cli, tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    root = Path.cwd()
    ref.joinpath("v100.toml").write_text(f"""preset = "v100"
config = "{root / 'configs/v100.toml'}"
mape_target = 0.5

[[row]]
id = "l1_latency"
quantity = "L1 hit latency"
value = 30.0
unit = "cycles"
source = "a test"
method = "dependent loads"
workload = "{root / 'workloads/reference/chase.kern'}"
params = {{ N = 256 }}
measure = "report.l1_hit"
tolerance = 0.5
better = "lower"
""")
    p = cli("validate", "--reference", ref, "--out", tmp_path / "cli")
    r = gpumemsim.validate(reference=ref, out=tmp_path / "py")
    assert r.to_json() == (tmp_path / "cli" / "results.json").read_text()
    for f in ["results.json", "results.csv"]:
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes()
    assert p.stdout.startswith(str(r))
    assert r.passed and list(r.rows.id) == ["l1_latency"]
    assert r.summary.preset.tolist() == ["v100"]
