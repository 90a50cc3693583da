#!/usr/bin/env bash
# Long fuzzing run of every reader (fuzz/README.md): seeds each target's corpus from the repository's
# inputs, then runs it for SECONDS (default 600) under cargo-fuzz, niced, one target after another.
# Prints libFuzzer's closing statistics per target; crashes land in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-600}"
seed() { # seed TARGET DIR EXT
  mkdir -p "corpus/$1"
  find "../$2" -maxdepth 1 -name "*.$3" -exec cp {} "corpus/$1/" \; 2>/dev/null || true
}
seed config configs toml
seed kernel workloads kern; seed kernel workloads/measure kern; seed kernel reports/kernels kern
seed litmus workloads/litmus/ptx litmus; seed litmus workloads/litmus/opencl litmus
seed litmus workloads/litmus/chapter litmus; seed litmus workloads/litmus-needs litmus
seed litmus fuzz/seeds/litmus expect; seed litmus fuzz/seeds/litmus litmus
seed cuda workloads/chapters cu; seed cuda fuzz/seeds/cuda cu
seed opencl workloads/chapters cl; seed opencl fuzz/seeds/opencl cl
seed ptx workloads/ptx ptx
seed nvrtc workloads/chapters cu; seed nvrtc workloads/quickstart cu
seed nvrtc fuzz/seeds/nvrtc txt; seed nvrtc fuzz/seeds/nvrtc ptx
seed trace fuzz/seeds/trace traceg
seed sweep_spec reports toml
seed measurement reports/measured json; seed measurement workloads/measure toml
seed measurement reports/measured/nvidia-h100-80gb-hbm3-2026-11-27/cuda jsonl
seed reference reports/reference toml
seed cli_values fuzz/seeds/cli_values txt
cargo fuzz build -s none -a --release
for t in config kernel cuda opencl ptx nvrtc litmus trace sweep_spec measurement reference cli_values; do
  echo "== $t ($secs s)"
  nice timeout $((secs + 120)) cargo fuzz run -s none -a --release "$t" "corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=4096 -max_len=65536 -timeout=10 -print_final_stats=1 \
    2>&1 | tail -25 || echo "$t: stopped with status $?"
done
