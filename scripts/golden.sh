#!/usr/bin/env bash
# Golden outputs for refactors: the full JSON (and the printed summary) of every workload, litmus test and
# sample trace, so that two builds can be compared byte for byte:
#   scripts/golden.sh target/release/gpumemsim /tmp/golden-before
#   scripts/golden.sh /path/to/new/gpumemsim   /tmp/golden-after
#   diff -r /tmp/golden-before /tmp/golden-after && echo identical
# Each run's exit status goes into a `.rc` file beside its output; errors (e.g. the oversubscribed latch's
# no-progress diagnosis) into `.err`. ITER sets litmus iterations per test (default 2000).
set -uo pipefail
bin=$(realpath "$1"); out=$2
cd "$(dirname "$0")/.."
traces=${TRACES:-../shared/traces}
iter=${ITER:-2000}
mkdir -p "$out"/{run,litmus,trace}
run() { # NAME ARGS...
  local name=$1; shift
  "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
}
for cfg in h100 tiny stress; do
  for k in workloads/*.kern; do
    b=$(basename "$k" .kern)
    run "run/$b.$cfg" run "$k" --config "configs/$cfg.toml" --races --json "$out/run/$b.$cfg.json"
  done
  run "litmus/all.$cfg" litmus workloads/litmus --config "configs/$cfg.toml" --iterations "$iter" \
    --races --json "$out/litmus/all.$cfg.json"
done
for k in workloads/*.kern; do
  b=$(basename "$k" .kern)
  run "run/$b.threads2" run "$k" --threads 2 --json "$out/run/$b.threads2.json"
done
if [ -d "$traces" ]; then
  for t in "$traces"/*/; do
    b=$(basename "$t")
    run "trace/$b" run "$t" --json "$out/trace/$b.json"
    run "trace/$b.threads2" run "$t" --threads 2 --json "$out/trace/$b.threads2.json"
  done
fi
