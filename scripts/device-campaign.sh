#!/usr/bin/env bash
# The whole validation on one device, in one command, with a prebuilt binary (nothing is compiled here):
#   1. `gpu list`                       → gpu-list.txt
#   2. the measurement suite            → measured.json   (timings, checks; SPIR-V where the adapter has
#                                                          passthrough, WGSL otherwise: recorded per case)
#   3. GPU litmus with scoped variants  → litmus.json     (release/acquire, fences, seq_cst through SPIR-V)
#   4. `compare` of both against the matching preset → compare/ and compare-litmus/ (markdown, CSV, JSON,
#      PNG and SVG charts)
#   5. where nvcc is on the PATH (an NVIDIA machine): the CUDA ground truth, scripts/cuda-micro.sh →
#      cuda/ (latencies by clock64, the suite's chain, chase and contention kernels in CUDA, fences,
#      bandwidth), made a measurement file (scripts/cuda-measured.py → cuda-measured.json) and compared
#      → compare-cuda/: the simulator against the same programs without the Vulkan translation
# and writes OUTDIR/<device>-<date>/ (default OUTDIR: reports/measured) with those files, the log of every
# command and a README.md that says what ran, with which exit status.
#
# Usage: scripts/device-campaign.sh BIN [OUTDIR]
#   BIN     a gpumemsim binary (e.g. target/release/gpumemsim built elsewhere and copied over)
#   OUTDIR  parent folder of the campaign folder (default reports/measured)
# Environment:
#   ADAPTER=N      adapter index from `gpu list` (default 0)
#   SUITE=FILE     measurement suite (default: workloads/measure/suite.toml; ci.toml on a CPU adapter)
#   LITMUS=FILE    litmus suite (default: workloads/measure/litmus.toml; litmus-ci.toml on a CPU adapter)
#   CONFIG=FILE    preset to compare with (default: by adapter name, H100/A100/V100; else the embedded
#                  default, H100, and the README says that no preset matches)
#   SHADER=auto|wgsl|spirv   shader path of `measure` (default auto)
#   MEASURE_S=N    stop each `measure` step after N seconds (default: no limit); its file then holds the
#                  cases it finished (`"partial": true`) and the comparisons run on them: for a lent
#                  machine whose time is counted
# Runs from the repository root (the suites name kernels and tests by relative path). Exit status: 0 when
# every step succeeded, 1 when one failed (the folder is still written, with what failed and why), 2 for
# bad usage.
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BIN [OUTDIR]" >&2
  exit 2
fi
BIN=$(realpath -- "$1" 2>/dev/null || true)
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "device-campaign: $1 is not an executable gpumemsim binary" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${2:-$ROOT/reports/measured}
mkdir -p "$OUTDIR" && OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$ROOT" || exit 2
ADAPTER=${ADAPTER:-0}
SHADER=${SHADER:-auto}
limit=()
if [ -n "${MEASURE_S:-}" ]; then
  case "$MEASURE_S" in
    *[!0-9]* | "") echo "device-campaign: MEASURE_S=$MEASURE_S: a whole number of seconds" >&2; exit 2 ;;
  esac
  limit=(timeout --signal=TERM "$MEASURE_S")
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failed=()
step() { # step NAME LOGFILE CMD...: runs CMD, logs stdout+stderr, notes a failure
  local name=$1 log=$2
  shift 2
  echo "device-campaign: $name: $*" >&2
  local t0=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  echo "$name|$rc|$((SECONDS - t0))|$*" >>"$TMP/steps"
  [ $rc -eq 0 ] || failed+=("$name (exit $rc)")
  return $rc
}

step "gpu list" "$TMP/gpu-list.txt" "$BIN" gpu list
line=$(grep -E "^\[$ADAPTER\] " "$TMP/gpu-list.txt" || true)
if [ -z "$line" ]; then
  echo "device-campaign: no adapter $ADAPTER:" >&2
  cat "$TMP/gpu-list.txt" >&2
  exit 1
fi
cpu=0
case "$line" in *" cpu, driver"* | *"vulkan cpu"*) cpu=1 ;; esac
if [ $cpu -eq 1 ]; then
  SUITE=${SUITE:-workloads/measure/ci.toml}
  LITMUS=${LITMUS:-workloads/measure/litmus-ci.toml}
else
  SUITE=${SUITE:-workloads/measure/suite.toml}
  LITMUS=${LITMUS:-workloads/measure/litmus.toml}
fi
preset_note=""
if [ -z "${CONFIG:-}" ]; then
  case "$line" in
    *H100*) CONFIG=configs/h100.toml ;;
    *A100*) CONFIG=configs/a100.toml ;;
    *V100*) CONFIG=configs/v100.toml ;;
    *) CONFIG=""; preset_note="No preset matches this adapter; compared with the embedded default (H100)." ;;
  esac
fi
cfg_args=()
[ -n "$CONFIG" ] && cfg_args=(--config "$CONFIG")

mkdir -p "$TMP/m"
step "measure" "$TMP/measure.log" "${limit[@]}" "$BIN" measure "$SUITE" --adapter "$ADAPTER" --shader "$SHADER" --out "$TMP/m/measured.json"
step "litmus" "$TMP/litmus.log" "${limit[@]}" "$BIN" measure "$LITMUS" --adapter "$ADAPTER" --shader "$SHADER" --out "$TMP/m/litmus.json"

# <device>-<date> from the measurement file's adapter and date (the name `measure` gives a file).
meta=$(python3 - "$TMP/m" <<'EOF' 2>/dev/null
import json, re, sys, os
for f in ("measured.json", "litmus.json"):
    p = os.path.join(sys.argv[1], f)
    if os.path.exists(p):
        m = json.load(open(p))
        # As `AdapterReport::slug`: the name up to " (", lower-case alphanumerics joined by '-'.
        base = m["adapter"]["name"].split(" (")[0]
        name = re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")
        print(f"{name}-{m['date'][:10]}")
        break
EOF
)
if [ -z "$meta" ]; then
  meta="adapter$ADAPTER-$(date -u +%Y-%m-%d)"
fi
DEST="$OUTDIR/$meta"
mkdir -p "$DEST"
# Inside the checkout, the files name each other by paths relative to its root.
DREL=$(realpath --relative-to="$ROOT" "$DEST")
case "$DREL" in ../*) DREL=$DEST ;; esac
cp "$TMP/gpu-list.txt" "$DEST/"
[ -f "$TMP/m/measured.json" ] && cp "$TMP/m/measured.json" "$DEST/"
[ -f "$TMP/m/litmus.json" ] && cp "$TMP/m/litmus.json" "$DEST/"
mkdir -p "$DEST/logs"
cp "$TMP/measure.log" "$TMP/litmus.log" "$DEST/logs/"
if [ -f "$DEST/measured.json" ]; then
  step "compare" "$DEST/logs/compare.log" "$BIN" compare --measured "$DREL/measured.json" "${cfg_args[@]}" --out "$DREL/compare"
fi
cuda_note="CUDA ground truth: not run (no nvcc on the PATH)."
[ "$cpu" -eq 1 ] && cuda_note="CUDA ground truth: not run (a CPU adapter)."
if command -v nvcc >/dev/null 2>&1 && [ "$cpu" -eq 0 ]; then
  cuda_note="CUDA ground truth: \`cuda/\` (micro.cu's output), \`cuda-measured.json\`, \`compare-cuda/\`."
  if step "cuda" "$DEST/logs/cuda.log" scripts/cuda-micro.sh "$DEST/cuda" &&
    [ -f "$DEST/measured.json" ] &&
    step "cuda measured" "$DEST/logs/cuda-measured.log" python3 scripts/cuda-measured.py \
      "$DEST/measured.json" "$DEST/cuda/cuda-micro.jsonl" "$DEST/cuda-measured.json"; then
    step "compare cuda" "$DEST/logs/compare-cuda.log" "$BIN" compare --measured "$DREL/cuda-measured.json" "${cfg_args[@]}" --out "$DREL/compare-cuda"
  fi
fi
if [ -f "$DEST/litmus.json" ]; then
  step "compare litmus" "$DEST/logs/compare-litmus.log" "$BIN" compare --measured "$DREL/litmus.json" "${cfg_args[@]}" --out "$DREL/compare-litmus"
fi

{
  echo "# Device campaign: ${line#*] }"
  echo
  echo "Written by \`scripts/device-campaign.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) with \`$("$BIN" --version 2>/dev/null || echo gpumemsim)\`"
  echo "(adapter $ADAPTER, shader path \`$SHADER\`)."
  if [ $cpu -eq 1 ]; then
    echo
    echo "**This is a CPU adapter: its timings say nothing about a GPU.** The campaign proves the harness"
    echo "(translation, dispatch, checks, litmus, compare) and nothing about a memory system."
  fi
  echo
  echo "| step | exit | seconds | command |"
  echo "|---|---|---|---|"
  while IFS='|' read -r name rc secs cmd; do
    cmd=${cmd//$BIN/gpumemsim}
    cmd=${cmd//$TMP\/m\//}
    echo "| $name | $rc | $secs | \`$cmd\` |"
  done <"$TMP/steps"
  echo
  echo "Suite \`$SUITE\`, litmus suite \`$LITMUS\`, compared with \`${CONFIG:-embedded default}\`. $preset_note"
  echo
  echo "$cuda_note"
  echo
  echo "Files: \`gpu-list.txt\`; \`measured.json\` and \`litmus.json\` (measurement files: every case and litmus"
  echo "variant with its status, shader path and, for litmus, the orders the GPU ran weaker than written);"
  echo "\`compare/\` and \`compare-litmus/\` (\`comparison.md\` first; CSV, JSON, PNG and SVG charts);"
  echo "\`logs/\` (each command's output)."
  if [ ${#failed[@]} -gt 0 ]; then
    echo
    echo "**Failed steps:** ${failed[*]} (see \`logs/\`; a measure step fails when a case gave no result, and"
    echo "the measurement file records which and why; exit 124: stopped by MEASURE_S, its file partial)."
  fi
} >"$DEST/README.md"
echo "device-campaign: wrote $DEST" >&2
[ ${#failed[@]} -eq 0 ] || exit 1
