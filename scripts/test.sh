#!/usr/bin/env bash
# The test command of the README: system packages for the wgpu tests (lavapipe) and for the real-Slurm
# test (slurm-wlm, munge), and pip packages for the Python package's tests, each installed only when
# missing, then every test: cargo's, then the Python package's (scripts/python-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The Vulkan loader warns on stderr without a runtime dir; give it a private one.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
  XDG_RUNTIME_DIR="$(mktemp -d)"
  chmod 700 "$XDG_RUNTIME_DIR"
  export XDG_RUNTIME_DIR
fi
cargo test --locked "$@"
# The Python package (docs/python.md), after the suite and only for the whole suite (no filter
# arguments): it compares the package with the CLI that cargo test just built.
if [ $# -eq 0 ]; then
  scripts/python-test.sh
fi
