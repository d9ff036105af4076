#!/usr/bin/env bash
# Runs a command, and everything it starts, on a slow machine: a CPU cgroup that lets it use
# CORES cores' worth of time at most (0.5: half of one). Guarantees that hold only on a fast,
# quiet machine fail here: timing bounds, lost races, work that piles up.
#   test/slow-machine.sh 0.5 npx vitest run test/chaos.test.ts
#   test/slow-machine.sh 0.5 bash .ci/run
# Needs a writable cgroup (root, or a delegated one): cgroup v2's cpu.max or v1's cpu quota.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 CORES COMMAND [ARG]..." >&2
  exit 2
fi
cores=$1
shift
period=100000
quota=$(awk -v c="$cores" -v p="$period" 'BEGIN { q = int(c * p); if (q < 1000) q = 1000; print q }')
name="hookline-slow-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  root=/sys/fs/cgroup
  dir="$root/$name"
  mkdir "$dir"
  echo "$quota $period" >"$dir/cpu.max"
else
  root=/sys/fs/cgroup/cpu
  dir="$root/$name"
  mkdir "$dir"
  echo "$period" >"$dir/cpu.cfs_period_us"
  echo "$quota" >"$dir/cpu.cfs_quota_us"
fi
cleanup() {
  # This shell leaves the group; whatever is left of the command is stopped; the group goes.
  echo $$ >"$root/cgroup.procs"
  for pid in $(cat "$dir/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do rmdir "$dir" 2>/dev/null && break; sleep 0.1; done
}
trap cleanup EXIT
echo "slow-machine: $cores cores' worth of CPU ($quota/$period µs) for: $*" >&2
# This shell joins the group first, so the command and all it starts are in it.
echo $$ >"$dir/cgroup.procs"
"$@"
