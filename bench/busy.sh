#!/usr/bin/env bash
# Run a command on a busy machine: one busy loop per core (or BUSY=N), at
# nice -5 (they get more CPU than the command's own processes), for as long
# as the command runs. The loops are ended by PID when it exits.
#
#   bash bench/busy.sh go test -race ./...
set -euo pipefail
n=${BUSY:-$(nproc)}
pids=()
cleanup() { ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
for ((i = 0; i < n; i++)); do
  nice -n -5 bash -c 'while :; do :; done' &
  pids+=($!)
done
echo "busy.sh: $n busy loops at nice -5 (pids ${pids[*]}); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start=$(date +%s)
rc=0
"$@" || rc=$?
echo "busy.sh: exit $rc after $(($(date +%s) - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $rc
