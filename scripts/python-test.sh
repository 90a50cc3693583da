#!/usr/bin/env bash
# The Python package's tests (sim/python/tests, pytest): builds the wheel with maturin in the dev
# profile, installs it into a virtual environment under the target folder that also sees the
# interpreter's own packages (pandas, pytest, nbclient, ...: scripts/install-deps.sh python), and runs
# pytest against the CLI that `cargo test`/`cargo build` left in target/debug (same source, same build).
#
# Without python3 and pip it says so and exits 0, except in CI (CI=true) or with
# GPUMEMSIM_REQUIRE_PYTHON=1, where a missing interpreter fails. Prints its own duration at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
py=${PYTHON:-python3}
if ! "$py" -m pip --version >/dev/null 2>&1; then
  if [ "${CI:-}" = true ] || [ "${GPUMEMSIM_REQUIRE_PYTHON:-}" = 1 ]; then
    echo "python-test: no $py with pip; the Python package's tests cannot run" >&2
    exit 1
  fi
  echo "python-test: skipped: no $py with pip (the Python package's tests need it)" >&2
  exit 0
fi
target=${CARGO_TARGET_DIR:-target}
venv="$target/python-venv"
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
wheels="$target/python-wheels"
rm -rf "$wheels"
# Dev profile: no optimised rebuild of the simulator for a test; --strip keeps the wheel small.
"$py" -m maturin build --locked --profile dev --strip --quiet --out "$wheels"
"$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$wheels"/gpumemsim-*.whl
export GPUMEMSIM_CLI="${GPUMEMSIM_CLI:-$target/debug/gpumemsim}"
[ -x "$GPUMEMSIM_CLI" ] || cargo build --locked --bin gpumemsim
"$venv/bin/python" -m pytest -q -p no:cacheprovider sim/python/tests
echo "python-test: $(( $(date +%s) - start )) s (wheel build, install, tests)" >&2
