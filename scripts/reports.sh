#!/usr/bin/env bash
# Regenerates the shipped reports (issue 45 item 2): every sweep report of reports/*.toml, the validation
# report (reports/validate/after) and, with --soundness, the litmus soundness run (reports/litmus-soundness/,
# about 20 minutes on 2 cores).
#
#   scripts/reports.sh [--only NAME[,NAME...]] [--soundness] [OUT]   # into OUT (default: a fresh folder)
#   scripts/reports.sh --in-place [--only ...] [--soundness]          # over the shipped reports/
#
# NAME is a sweep spec's stem (atomic-contention, l2-slices, memory-latency, store-buffer), `validate`
# or `measured` (the comparisons of reports/measured/ with the simulator).
# The binary is $GPUMEMSIM, else target/release/gpumemsim (built when missing). Without --in-place OUT
# must not exist yet, so that nothing tracked is overwritten; compare it with reports/ (diff -r) before
# copying. The integration test docs::shipped_reports_are_what_the_build_computes reruns some points of
# every shipped sweep report and fails, naming the columns, when a result differs.
set -euo pipefail
cd "$(dirname "$0")/.."

in_place=0 soundness=0 only="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --in-place) in_place=1 ;;
    --soundness) soundness=1 ;;
    --only) only="${2:?--only needs NAME[,NAME...]}"; shift ;;
    --only=*) only="${1#--only=}" ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scripts/reports.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) out="$1" ;;
  esac
  shift
done

if [ "$in_place" = 1 ]; then
  [ -z "$out" ] || { echo "scripts/reports.sh: --in-place writes reports/; give no OUT" >&2; exit 2; }
  out=reports
else
  out="${out:-regenerated-reports-$(date +%Y%m%d-%H%M%S)}"
  if [ -e "$out" ]; then
    echo "scripts/reports.sh: $out exists; give a fresh folder (or --in-place to update reports/)" >&2
    exit 2
  fi
  mkdir -p "$out"
fi

bin="${GPUMEMSIM:-target/release/gpumemsim}"
if [ ! -x "$bin" ]; then
  cargo build --release --locked
fi

wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

for spec in reports/*.toml; do
  name="$(basename "$spec" .toml)"
  wanted "$name" || continue
  echo "== sweep $spec -> $out/$name" >&2
  if [ "$in_place" = 1 ]; then
    # A fresh plan: results of an older build are not mixed in (sweeps refuse to), and points/ is not
    # shipped.
    rm -rf "$out/$name/points" "$out/$name/sweep.json"
  fi
  "$bin" sweep "$spec" --out "$out/$name"
  rm -rf "$out/$name/points"
done

if wanted validate; then
  echo "== validate -> $out/validate/after" >&2
  mkdir -p "$out/validate"
  # Exit status 1 means a row missed its tolerance: the report is still the one to ship.
  "$bin" validate --out "$out/validate/after" || echo "validate: some rows miss their tolerance (see above)" >&2
fi

if wanted measured; then
  # Each shipped comparison of a measurement with the simulator (reports/measured/*/compare*/ and
  # reports/measured/*-vs-*/; first-run/ is kept as it was, the campaign's first comparison), made again
  # from the measurement and config its comparison.summary.json names.
  for summary in reports/measured/*/compare*/comparison.summary.json reports/measured/*-vs-*/comparison.summary.json; do
    [ -e "$summary" ] || continue
    dir="$(dirname "$summary")"
    measured="$(sed -n 's/^  "measurement": "\(.*\)",$/\1/p' "$summary")"
    config="$(sed -n 's/^  "config": "\(.*\)",$/\1/p' "$summary")"
    cfg=()
    case "$config" in *"(embedded)"*) ;; *) cfg=(--config "$config") ;; esac
    dest="$out/${dir#reports/}"
    echo "== compare $measured ${cfg[*]} -> $dest" >&2
    mkdir -p "$dest"
    # Exit status 1 means a case missed its tolerance or a litmus outcome disagrees: still the report.
    "$bin" compare --measured "$measured" "${cfg[@]}" --out "$dest" >/dev/null \
      || echo "compare $measured: exit status $? (see above)" >&2
  done
fi

if [ "$soundness" = 1 ]; then
  mkdir -p "$out/litmus-soundness"
  for c in tiny h100 stress; do
    echo "== litmus soundness on $c -> $out/litmus-soundness/$c.json" >&2
    cfg=(--config "configs/$c.toml")
    [ "$c" = h100 ] && cfg=()
    "$bin" litmus workloads/litmus "${cfg[@]}" --iterations 100000 --brief --json "$out/litmus-soundness/$c.json" \
      || echo "litmus on $c: exit status $? (see the summary above)" >&2
  done
fi
echo "written: $out" >&2
