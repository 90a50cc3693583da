"""Fixtures: the repository root as the working folder (the paths below are the CLI's examples) and
the CLI binary whose outputs the package must reproduce.

The binary is $GPUMEMSIM_CLI, else target/debug/gpumemsim under $CARGO_TARGET_DIR or the repository's
target/ (what `cargo test` builds, so scripts/test.sh has it). Built from the same source as the
extension, it stamps the same build into sweep results.
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _cli_path():
    if os.environ.get("GPUMEMSIM_CLI"):
        return Path(os.environ["GPUMEMSIM_CLI"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    return target / "debug" / "gpumemsim"


@pytest.fixture(autouse=True)
def at_repo(monkeypatch):
    monkeypatch.chdir(REPO)


class Cli:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, ok=(0,)):
        p = subprocess.run(
            [str(self.path), *map(str, args)], capture_output=True, text=True, cwd=REPO, timeout=600
        )
        assert p.returncode in ok, f"gpumemsim {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}"
        return p


@pytest.fixture(scope="session")
def cli():
    path = _cli_path()
    if not path.is_file():
        pytest.fail(
            f"{path}: no gpumemsim binary; build it (`cargo build --locked`) or set GPUMEMSIM_CLI",
            pytrace=False,
        )
    return Cli(path)
