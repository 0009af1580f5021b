#!/usr/bin/env bash
# Keeps background builds out of a benchmark's way on a shared machine:
# every 2 s, every process at nice 19 (how builds are run here) is put in
# SCHED_IDLE, so a waking benchmark thread preempts it at once. `nice`
# alone lets a running build finish its time slice first, which adds
# milliseconds to each wake-up of a latency benchmark (docs/benchmarks.md,
# "Builds in SCHED_IDLE"). Children inherit the policy. Runs until killed;
# start it detached and without inherited descriptors, e.g.
#   setsid scripts/idle-builds.sh </dev/null >/dev/null 2>&1 &
# (a lock file's descriptor inherited from `flock` would be held forever).
set -u
while true; do
  for pid in $(ps -eo pid=,ni=,cls= | awk '$2 == 19 && $3 != "IDL" { print $1 }'); do
    chrt --idle --pid 0 "$pid" >/dev/null 2>&1
  done
  sleep 2
done
