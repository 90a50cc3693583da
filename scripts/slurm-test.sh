#!/usr/bin/env bash
# The real-Slurm test of gpumemsim's cluster sweeps (issue 17), as a cluster user works:
#
#  1. installs Debian's slurm-wlm and munge when missing (scripts/install-deps.sh slurm);
#  2. starts a private one-node cluster on localhost: its own munged, slurmctld and slurmd, on free
#     ports, with every file in a temporary folder (SLURM_CONF points the commands at it; a Slurm or
#     munge already running on the machine is not touched);
#  3. `gpumemsim sweep submit` of a small sweep (12 points, 3 shards, 1 CPU each) plus its merge job;
#  4. kills (scancel) array task 1 after it finished a point, while it still has points to run;
#  5. checks that the merge job (afterany) ran anyway and reported shard 1 missing, and that
#     `sweep status` names index 1 to resubmit;
#     a task submitted by hand (`sbatch --hold --array=1 RELATIVE/slurm/array.sbatch` from another
#     folder) is seen by `sweep status` as queued, and shard 1 is not listed to resubmit meanwhile;
#  6. resubmits with `gpumemsim sweep submit` again, which submits index 1 alone and a new merge job,
#     and waits for it; task 1's log holds both attempts (append mode);
#  7. runs the same sweep on this machine alone and compares the merged results.csv, results.json,
#     index.html, charts and every point file byte for byte;
#  8. runs the sweep once more through the shipped reports/slurm/sweep.sbatch and merge.sbatch, as
#     their comments document, and compares again;
#  9. stops the daemons it started (by their process ids) and removes its folder.
#
# Usage: scripts/slurm-test.sh [GPUMEMSIM_BINARY]
#   default binary: target/release/gpumemsim (built with `cargo build --release` when missing).
# Exit status: 0 passed; 1 failed (the daemons' and jobs' logs are printed); 77 cannot run here (not
# root and no password-less sudo: slurmd must run as root; or Slurm missing without apt-get).
# GPUMEMSIM_SLURM_KEEP=1 keeps the temporary folder.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
started=$SECONDS
say() { echo "slurm-test [$((SECONDS - started))s]: $*"; }
fail() { echo "slurm-test: FAILED: $*" >&2; exit 1; }
skip() { echo "slurm-test: SKIPPED: $*" >&2; exit 77; }

if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then
    exec sudo -n env "PATH=$PATH" "GPUMEMSIM_SLURM_KEEP=${GPUMEMSIM_SLURM_KEEP:-}" "$0" "$@"
  fi
  skip "needs root (slurmd runs as root) or password-less sudo"
fi
export PATH="$PATH:/usr/sbin:/sbin"

bin="${1:-$repo/target/release/gpumemsim}"
if [ ! -x "$bin" ] && [ $# -eq 0 ]; then
  say "building $bin"
  (cd "$repo" && cargo build --release --locked)
fi
[ -x "$bin" ] || fail "$bin is not an executable"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

if ! "$repo/scripts/install-deps.sh" slurm; then
  command -v apt-get >/dev/null 2>&1 || skip "Slurm is not installed and there is no apt-get"
  fail "could not install slurm-wlm and munge"
fi

tmp="$(mktemp -d /tmp/gpumemsim-slurm.XXXXXX)"
chmod 755 "$tmp"  # munged's socket and the jobs' files must be reachable
export SLURM_CONF="$tmp/slurm.conf"
pids=()
ok=0

show_logs() {
  for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/munged.log "$tmp"/*.out "$tmp"/run*/logs/*.log; do
    [ -f "$f" ] || continue
    echo "---- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

cleanup() {
  set +e
  trap '' PIPE INT TERM HUP
  if [ $ok -ne 1 ]; then show_logs; fi
  if [ ${#pids[@]} -gt 0 ] && command -v scancel >/dev/null; then
    scancel --me --quiet 2>/dev/null
    for _ in $(seq 1 100); do
      [ -z "$(squeue --me --noheader 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  # Stop the daemons in reverse order of start, each by the id it was started with.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[$i]}" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "${pids[$i]}" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${pids[$i]}" 2>/dev/null
    wait "${pids[$i]}" 2>/dev/null
  done
  if [ "${GPUMEMSIM_SLURM_KEEP:-}" = 1 ]; then
    echo "slurm-test: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
# A signal ends the script through exit, so that the EXIT trap stops the daemons.
trap 'exit 130' INT TERM HUP PIPE

# Waits until a command succeeds: wait_for SECONDS WHAT COMMAND...
wait_for() {
  local limit=$1 what=$2
  shift 2
  local end=$((SECONDS + limit))
  until "$@"; do
    [ $SECONDS -lt $end ] || fail "$what: not within ${limit}s"
    sleep 0.1
  done
}

# Two consecutive free TCP ports on localhost.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 40000))
  if port_free "$p" && port_free $((p + 1)); then port=$p; break; fi
done
[ -n "$port" ] || fail "no free port pair found"

# --- the cluster ---------------------------------------------------------------------------------
host="$(hostname -s)"
mungekey --create --keyfile="$tmp/munge.key" >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge.key"
munged --foreground --force --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" \
  >"$tmp/munged.out" 2>&1 &
pids+=($!)
wait_for 20 "munged answers" test -S "$tmp/munge.sock"

mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$SLURM_CONF" <<EOF
# A private one-node cluster for gpumemsim's Slurm test.
ClusterName=gpumemsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
# No cgroups (containers, CI): processes tracked by parent id, no binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
# Finished jobs stay known (scontrol show job) for 10 minutes.
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo --noheader --format=%T 2>/dev/null)" = idle ]; }
wait_for 60 "the node is idle" node_idle
say "cluster up: slurmctld on port $port, node $host with $(nproc) CPUs"

# --- helpers over jobs ----------------------------------------------------------------------------
state_of() { scontrol show job "$1" --oneliner 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
exit_of() { scontrol show job "$1" --oneliner 2>/dev/null | grep -o 'ExitCode=[0-9:]*' | head -1 | cut -d= -f2; }
gone() { [ -z "$(squeue --noheader --jobs="$1" 2>/dev/null)" ]; }
last_job() { awk -F'\t' -v k="$2" '$2 == k {j = $3} END {print j}' "$1/slurm/jobs.tsv"; }
last_detail() { awk -F'\t' -v k="$2" '$2 == k {d = $4} END {print d}' "$1/slurm/jobs.tsv"; }
# Done and missing points of shard $2 in folder $1, from `sweep status`.
# (`sweep status` exits 2 while points are missing: not a failure here.)
shard_counts() { { "$bin" sweep status "$1" 2>/dev/null || true; } | awk -v s="$2" '$1 == s {print $3, $5}'; }
same_files() {
  local a=$1 b=$2 f n=0
  for f in results.csv results.json index.html charts/cycles.png charts/cycles.svg; do
    cmp "$a/$f" "$b/$f" || fail "$a/$f differs from $b/$f"
  done
  for f in "$b"/points/*.json; do
    cmp "$f" "$a/points/$(basename "$f")" || fail "point $(basename "$f") differs"
    n=$((n + 1))
  done
  [ "$n" -eq 12 ] || fail "$b holds $n point results, not 12"
  say "$a: results.csv, results.json, index.html, charts and $n point files identical to $b"
}

# --- the sweep ------------------------------------------------------------------------------------
# Points of about half a second each: T scales the contention kernel to this binary's speed (a debug
# build is several times slower than a release one), so that task 1 can be killed between points.
calib_t=131072
t0=$(date +%s%N)
"$bin" run "$repo/workloads/contention.kern" --config "$repo/configs/tiny.toml" --param T=$calib_t \
  --param K=8 --set stress.interconnect_jitter=4 >/dev/null
ms=$((($(date +%s%N) - t0) / 1000000))
t=$calib_t
while [ $((ms * t / calib_t)) -lt 500 ] && [ $t -lt 8388608 ]; do t=$((t * 2)); done
spec="$tmp/sweep.toml"
cat >"$spec" <<EOF
name = "slurm test"
config = "$repo/configs/tiny.toml"
seeds = [1, 2, 3, 4, 5, 6]
[params]
"stress.interconnect_jitter" = 4
[[workload]]
kernel = "$repo/workloads/contention.kern"
params = { T = $t, K = [1, 8] }
[[chart]]
name = "cycles"
kind = "bar"
x = "K"
y = "kernel.cycles"
EOF
say "sweep: 12 points of T=$t work-items (one at T=$calib_t took ${ms} ms)"

run="$tmp/run"
"$bin" sweep submit "$spec" --slurm --out "$run" --shards 3 --cpus 1 --time 10 | tee "$tmp/submit1.out"
array=$(last_job "$run" array)
merge=$(last_job "$run" merge)
[ "$(last_detail "$run" array)" = "0-2" ] || fail "the first submission is not shards 0-2"
[ "$(last_detail "$run" merge)" = "afterany:$array" ] || fail "the merge job does not wait (afterany) for $array"

# Kill task 1 once it has finished a point and still has points to run.
task1_midway() {
  local c
  c=$(shard_counts "$run" 1)
  set -- $c
  [ "${1:-0}" -ge 1 ] && [ "${2:-0}" -ge 1 ]
}
wait_for 120 "task ${array}_1 finishes its first point" task1_midway
scancel "${array}_1"
say "killed task ${array}_1 after $(shard_counts "$run" 1 | cut -d' ' -f1) of its 4 points"
wait_for 120 "merge job $merge ends" gone "$merge"
[ "$(state_of "${array}_1")" = CANCELLED ] || fail "task ${array}_1 is $(state_of "${array}_1"), not CANCELLED"
missing=$(shard_counts "$run" 1 | cut -d' ' -f2)
[ "$missing" -ge 1 ] || fail "task 1 finished all its points before it was killed"
[ "$(exit_of "$merge")" = "1:0" ] || fail "merge job $merge exited $(exit_of "$merge"), not 1 (points missing)"
grep -q "to resubmit (missing points): shard 1:" "$run/logs/merge.log" \
  || fail "the merge job's log does not name shard 1 to resubmit"
for s in 0 2; do
  [ "$(exit_of "${array}_$s")" = "0:0" ] || fail "task ${array}_$s exited $(exit_of "${array}_$s")"
done
set +e
"$bin" sweep status "$run" >"$tmp/status.out"
rc=$?
set -e
[ $rc -eq 2 ] || fail "sweep status exited $rc with points missing, not 2"
grep -q "to resubmit (missing points): shard 1:" "$tmp/status.out" || fail "sweep status does not name shard 1"
say "merge job $merge ran after the kill (afterany), exited 1 and named shard 1 ($missing points missing)"

# A task submitted by hand (a relative path, from another folder), held so that it stays queued:
# `sweep status` sees it through squeue by its batch script and does not list shard 1 to resubmit.
held=$(cd "$(dirname "$run")" && sbatch --parsable --hold --array=1 "$(basename "$run")/slurm/array.sbatch")
set +e
"$bin" sweep status "$run" >"$tmp/status-held.out"
set -e
grep -q "^queued or running (Slurm): shard 1$" "$tmp/status-held.out" \
  || { cat "$tmp/status-held.out"; squeue --me --array --format='%F|%K|%o'; fail "sweep status does not see task ${held}_1, submitted by hand"; }
if grep -q "to resubmit (missing points): shard 1:" "$tmp/status-held.out"; then
  fail "sweep status lists shard 1 to resubmit while ${held}_1 has it queued"
fi
scancel "$held"
wait_for 60 "held job $held leaves the queue" gone "$held"
say "task ${held}_1, submitted by hand with a relative path, is seen as queued by sweep status"

"$bin" sweep submit "$spec" --slurm --out "$run" | tee "$tmp/submit2.out"
array2=$(last_job "$run" array)
merge2=$(last_job "$run" merge)
[ "$array2" != "$array" ] || fail "the resubmission submitted no array"
[ "$(last_detail "$run" array)" = "1" ] || fail "the resubmission is not index 1 alone: $(last_detail "$run" array)"
wait_for 120 "merge job $merge2 ends" gone "$merge2"
[ "$(exit_of "${array2}_1")" = "0:0" ] || fail "resubmitted task ${array2}_1 exited $(exit_of "${array2}_1")"
[ "$(exit_of "$merge2")" = "0:0" ] || fail "merge job $merge2 exited $(exit_of "$merge2")"
[ "$(grep -c '^== shard 1 of 3' "$run/logs/shard-1.log")" -eq 2 ] \
  || fail "logs/shard-1.log does not hold both attempts (append mode)"
grep -q "already done" "$run/logs/shard-1.log" || fail "the resubmitted task did not skip the finished points"
"$bin" sweep status "$run" >/dev/null || fail "sweep status is not 0 after the merge"
say "resubmitted index 1 (job $array2), merge job $merge2 combined the results"

"$bin" sweep "$spec" --out "$tmp/single" --jobs 2 >/dev/null 2>&1 || fail "the single-machine sweep failed"
same_files "$run" "$tmp/single"

# --- the shipped example scripts, as their comments say ----------------------------------------------
manual="$tmp/run-manual"
"$bin" sweep plan "$spec" --out "$manual" --shards 3 >/dev/null
if [ "$bin" = "$repo/target/release/gpumemsim" ]; then
  unset GPUMEMSIM  # the documented default: target/release/gpumemsim under the submit folder
else
  export GPUMEMSIM="$bin"
fi
cd "$repo"
array3=$(sbatch --parsable --array=0-2 --cpus-per-task=1 --output="$manual/logs/shard-%a.log" \
  reports/slurm/sweep.sbatch "$spec" "$manual")
merge3=$(sbatch --parsable --dependency="afterany:$array3" --output="$manual/logs/merge.log" \
  reports/slurm/merge.sbatch "$manual")
wait_for 120 "merge job $merge3 of the example scripts ends" gone "$merge3"
[ "$(exit_of "$merge3")" = "0:0" ] || fail "the example merge job $merge3 exited $(exit_of "$merge3")"
same_files "$manual" "$tmp/single"

ok=1
say "PASSED"
