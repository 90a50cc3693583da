#!/usr/bin/env bash
# Ground-truth microbenchmarks on an NVIDIA GPU with CUDA (benches/cuda/micro.cu): SM clock, load-to-use
# latency per access kind and footprint, the measurement suite's chain/chase/contention kernels written in
# CUDA, fence costs, DRAM and L2 bandwidth. Needs nvcc and an NVIDIA GPU; nothing of the Rust build.
#
# Usage: scripts/cuda-micro.sh OUTDIR [ARCH]
#   OUTDIR  where cuda-micro.jsonl (one JSON object per measurement), cuda-micro.log (build and run
#           output) and micro.sass (the compiled kernels, to check which instructions ran) are written
#   ARCH    nvcc -arch (default sm_90: Hopper)
# Exit status: 0 when it built and ran, 1 otherwise (the log says why), 2 for bad usage.
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [ARCH]" >&2
  exit 2
fi
OUT=$1
ARCH=${2:-sm_90}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT" || exit 2
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BIN=$(mktemp -d)/micro
trap 'rm -rf "$(dirname "$BIN")"' EXIT
{
  echo "nvcc: $NVCC"
  "$NVCC" --version
  "$NVCC" -O3 -std=c++17 -arch="$ARCH" -lineinfo -o "$BIN" "$ROOT/benches/cuda/micro.cu"
} >"$OUT/cuda-micro.log" 2>&1 || {
  echo "cuda-micro: build failed (see $OUT/cuda-micro.log)" >&2
  exit 1
}
command -v cuobjdump >/dev/null && cuobjdump -sass "$BIN" >"$OUT/micro.sass" 2>&1
"$BIN" >"$OUT/cuda-micro.jsonl" 2>>"$OUT/cuda-micro.log"
rc=$?
echo "micro exit $rc" >>"$OUT/cuda-micro.log"
[ $rc -eq 0 ] || exit 1
