#!/usr/bin/env bash
# Replays issue 43's hostile inputs against a gpumemsim binary: each case is a command, the exit
# status it must end with, and a fragment its output (stdout and stderr together) must hold. Prints
# one line per case and a count; exits 1 when any case fails. Writes only under a temporary folder.
#
# Usage: scripts/hostile-43.sh [GPUMEMSIM_BINARY]   (default: target/release/gpumemsim)
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$repo/target/release/gpumemsim}"
[ -x "$bin" ] || { echo "hostile-43: no binary at $bin (cargo build --release)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
failed=0
cases=0

# expect NAME STATUS FRAGMENT -- COMMAND...
expect() {
  local name="$1" status="$2" fragment="$3"
  shift 4
  cases=$((cases + 1))
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" -eq "$status" ] && [[ "$out" == *"$fragment"* ]] && [[ "$out" != *panicked* ]]; then
    echo "ok    $name"
  else
    failed=$((failed + 1))
    echo "FAIL  $name: exit $rc (wanted $status), output: $(echo "$out" | tail -3)"
  fi
}

run=(run workloads/contention.kern --config configs/tiny.toml --param T=64)

# 1. A closed standard output ends the command quietly (head has its line).
expect "model | head" 0 "" -- bash -c "set -o pipefail; '$bin' model workloads/litmus/ptx | head -1 >/dev/null"
expect "litmus --brief | head" 0 "" -- bash -c "set -o pipefail; '$bin' litmus workloads/litmus/ptx --brief --iterations 20 | head -1 >/dev/null"
expect "config doc | head" 0 "" -- bash -c "set -o pipefail; '$bin' config doc | head -1 >/dev/null"

# 5. Refused.
mkdir -p "$tmp/wrap"
printf -- '-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (4,1,1)\n-accelsim tracer version = 4\n#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n0000 0000000f 1 R1 LDG.E 1 R2 4 1 0xfffffffffffffff8 8\n0010 0000000f 0 EXIT 0 0\n#END_TB\n' \
  >"$tmp/wrap/kernel-1.traceg"
echo kernel-1.traceg >"$tmp/wrap/kernelslist.g"
expect "trace address past 2^64" 1 "outside 0 ..= 2^64 - 1" -- "$bin" run "$tmp/wrap" --config configs/tiny.toml
expect "--timeline and --json one path" 1 "writes the same file" -- "$bin" "${run[@]}" --timeline "$tmp/a.json" --json "$tmp/a.json"
expect "--csv and --json one path" 1 "writes the same file" -- "$bin" "${run[@]}" --csv "$tmp/b" --json "$tmp/./b"
expect "--seed -1" 2 "not negative" -- "$bin" "${run[@]}" --seed -1
expect "--param T too large" 2 "does not fit in 64 bits" -- "$bin" run workloads/contention.kern --param T=99999999999999999999
printf '/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer o: u32[32] = zero\n*/\n__global__ void k(unsigned *o) { int y = 5000000000; o[threadIdx.x] = y; }\n' >"$tmp/c.cu"
expect ".cu constant too large for int" 1 "c.cu:6:" -- "$bin" run "$tmp/c.cu" --compiler builtin --config configs/tiny.toml
printf '/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer o: u32[32] = zero\n*/\n__global__ void k(unsigned *o) { o[threadIdx.x] = 1u << 32; }\n' >"$tmp/s.cu"
expect ".cu shift past the width" 1 "shift count 32 is outside 0 ..= 31" -- "$bin" run "$tmp/s.cu" --compiler builtin --config configs/tiny.toml
printf '[[preset]]\nname = "no-such-preset"\n' >"$tmp/ref.toml"
expect "unknown preset in a reference set" 1 "ref.toml:" -- "$bin" validate --reference "$tmp/ref.toml"
printf 'name = "s"\nconfig = "%s/configs/tiny.toml"\nseeds = [1]\n[[workload]]\nname = "c"\nkernel = "%s/workloads/contention.kern"\nparams = { T = 64 }\n' \
  "$repo" "$repo" >"$tmp/s.toml"
submit=(sweep submit --slurm "$tmp/s.toml" --dry-run)
expect "sweep submit: missing --binary" 1 "cannot be found" -- "$bin" "${submit[@]}" --out "$tmp/sub1" --shards 2 --binary "$tmp/none"
[ -e "$tmp/sub1/sweep.json" ] && { failed=$((failed + 1)); echo "FAIL  a failed submit left its plan"; }
touch "$tmp/not-executable"
expect "sweep submit: --binary not executable" 1 "is not executable" -- "$bin" "${submit[@]}" --out "$tmp/sub2" --shards 2 --binary "$tmp/not-executable"
expect "sweep submit: --mem sbatch refuses" 1 "must be a size Slurm accepts" -- "$bin" "${submit[@]}" --out "$tmp/sub3" --shards 2 --mem 4X
"$bin" "${submit[@]}" --out "$tmp/sub4" --shards 2 >/dev/null 2>&1
expect "sweep submit: --shards re-splitting a plan (dry run)" 1 "would re-split it" -- "$bin" "${submit[@]}" --out "$tmp/sub4" --shards 3

# 6. Before the work, nothing half-written.
expect "bad --timeline path, before the run" 1 "does not exist" -- "$bin" "${run[@]}" --json "$tmp/j.json" --timeline /nonexistent/t.json
[ -e "$tmp/j.json" ] && { failed=$((failed + 1)); echo "FAIL  the JSON was written although the timeline path is bad"; }
expect "--json /dev/stdout" 0 '"schema"' -- "$bin" "${run[@]}" --json /dev/stdout --csv /dev/null
[ -L /dev/stdout ] || [ -c /dev/stdout ] || [ -p /dev/stdout ] || { failed=$((failed + 1)); echo "FAIL  /dev/stdout was replaced"; }

# 7. Messages that locate.
mkdir -p "$tmp/grid"
printf -- '-kernel name = k\n-grid dim = (1,1,1)\n-grid dim = (2,1,1)\n-block dim = (4,1,1)\n-accelsim tracer version = 4\n' >"$tmp/grid/kernel-1.traceg"
echo kernel-1.traceg >"$tmp/grid/kernelslist.g"
expect "-grid dim twice" 1 "kernel-1.traceg:3: \`-grid dim\` appears twice" -- "$bin" run "$tmp/grid" --config configs/tiny.toml
mkdir -p "$tmp/tex"
printf -- '-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (4,1,1)\n-accelsim tracer version = 4\n#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n0000 0000000f 1 R2 TEX.B.LL 1 R1 4 1 0x100 4\n0010 0000000f 0 EXIT 0 0\n#END_TB\n' \
  >"$tmp/tex/kernel-1.traceg"
echo kernel-1.traceg >"$tmp/tex/kernelslist.g"
expect "TEX in a trace" 1 "kernel-1.traceg:9: column 20: \`TEX.B.LL\` is a texture instruction" -- "$bin" run "$tmp/tex" --config configs/tiny.toml
printf '/* gpumemsim\ngroups 1\ngroup_size 32\nbuffer o: u32[32] = zero\n*/\ntexture<float, 1> tx;\n__global__ void k(unsigned *o) { o[threadIdx.x] = 1; }\n' >"$tmp/t.cu"
expect "texture in a .cu kernel" 1 "t.cu:6:1: \`texture\`" -- "$bin" run "$tmp/t.cu" --compiler builtin --config configs/tiny.toml
printf 'cycle,location,metric,value,unit\n1,gpu,ipc,\xff,x\n' >"$tmp/i.csv"
expect "interval CSV not UTF-8" 1 "i.csv:2:11: not UTF-8" -- "$bin" plot "$tmp/i.csv" --kind intervals --out "$tmp/p.png"

echo "hostile-43: $((cases - failed)) of $cases cases as expected"
[ "$failed" -eq 0 ]
