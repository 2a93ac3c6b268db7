#!/usr/bin/env bash
# bench/recycle-busy.sh: does a leak of ~120 B/request that recycling
# hides survive a busy machine? (issue 41, item 4)
#
# Runs testdata/recycle in four shapes, each N times (default 2) on the
# machine as it is and N times under bench/busy.sh (one busy loop per core
# at nice -5), interleaved, with soakd's DEFAULT flags but the load's bound
# (closed loop, 4 connections, -d 90s), and counts the rss verdicts:
#
#   prefork-120      --workers 3 --max-requests 20000 --leak-bytes 120
#   prefork-no-leak  the same, --leak-bytes 0
#   supervised-120   --workers 1 --restart-every 20s --leak-bytes 120
#   supervised-no-leak  the same, --leak-bytes 0
#
# Lives are tens of thousands of requests, not the zoo's 150: at 120
# B/request a Go worker's own start-up (its heap and runtime, 0.5-8 MiB
# over its first requests) outweighs the leak of a 150-request life (18
# KiB) many times, and soakd reads those inconclusive, quiet or busy.
# Results and what they mean: docs/verdict-study.md, "Leaks that
# recycling hides, on a busy machine".
#
# Each run's directory (samples.csv, procs.csv, report.json) is kept
# under OUT (default a temporary directory, printed), so that another
# build can re-read the same runs: REANALYZE=OUT re-counts the verdicts
# with `$SOAKD analyze` instead of soaking. Loopback only; each server is
# ended by its process group; every run is bounded by -d.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/recycle-busy.sh
#   SOAKD=/tmp/soakd REANALYZE=/tmp/recycle-busy.XXXX bash bench/recycle-busy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
N=${N:-2}
DUR=${DUR:-90s}
rows=(
  "prefork-120|--workers 3 --max-requests 20000 --leak-bytes 120"
  "prefork-no-leak|--workers 3 --max-requests 20000 --leak-bytes 0"
  "supervised-120|--workers 1 --restart-every 20s --leak-bytes 120"
  "supervised-no-leak|--workers 1 --restart-every 20s --leak-bytes 0"
)

summary() { # FILE NAME MODE: one line from a report's JSON
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
path, name, mode = sys.argv[1:]
try:
    x = json.load(open(path))["resources"]["rss"]
except Exception as e:
    print(f"{name:20} {mode:5} error: {e}")
    sys.exit()
m = f" masked_by={x['masked_by']}" if x.get("masked_by") else ""
print(f"{name:20} {mode:5} {x['verdict']:12} {x['per_request']:8.4g} B/req CI {x['ci95'][0]:.4g}–{x['ci95'][1]:.4g}{m}")
PY
}

if [[ -n ${REANALYZE:-} ]]; then
  for d in "$REANALYZE"/*.*.*/; do
    d=${d%/}
    IFS=. read -r name mode _ <<<"$(basename "$d")"
    "$SOAKD" analyze --json "$d/run/samples.csv" >"$d/reanalysis.json" 2>/dev/null || true
    summary "$d/reanalysis.json" "$name" "$mode"
  done >"$REANALYZE/relines.txt"
  cat "$REANALYZE/relines.txt"
  lines=$REANALYZE/relines.txt
fi

if [[ -z ${REANALYZE:-} ]]; then
out=${OUT:-$(mktemp -d /tmp/recycle-busy.XXXX)}
mkdir -p "$out"
echo "runs kept in $out; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
work=$(mktemp -d)
go build -o "$work/recycle" ./testdata/recycle
spid=
cleanup() {
  [[ -n $spid ]] && kill -TERM -- "-$spid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

one() { # NAME MODE SERVER-ARGS...
  local name=$1 mode=$2; shift 2
  local dir="$out/$name.$mode.$i" pf="$work/port"
  mkdir -p "$dir"
  rm -f "$pf"
  setsid "$work/recycle" "$@" --max-lifetime 10m --port-file "$pf" >"$dir/server.log" 2>&1 &
  spid=$!
  for _ in $(seq 300); do [[ -s $pf ]] && break; sleep 0.1; done
  local url="http://$(tr -d '\n' <"$pf")/"
  local cmd=("$SOAKD" run -q --json --out "$dir/run" --pid "$spid" -c 4 -d "$DUR" "$url")
  if [[ $mode == busy ]]; then cmd=(bash bench/busy.sh "${cmd[@]}"); fi
  echo "load $(cut -d' ' -f1 /proc/loadavg) before" >"$dir/load"
  "${cmd[@]}" >"$dir/report.json" 2>"$dir/err" || true
  echo "load $(cut -d' ' -f1 /proc/loadavg) after" >>"$dir/load"
  kill -TERM -- "-$spid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  spid=
  summary "$dir/report.json" "$name" "$mode"
}

for ((i = 1; i <= N; i++)); do
  for row in "${rows[@]}"; do
    name=${row%%|*}
    read -ra args <<<"${row#*|}"
    one "$name" quiet "${args[@]}"
    one "$name" busy "${args[@]}"
  done
done | tee "$out/lines.txt"
lines=$out/lines.txt
fi
echo
echo "verdicts (rss) per row and machine; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{k=$1" "$2; c[k" "$3]++; keys[k]=1} END {for (k in keys) {s=k":"; for (kv in c) {split(kv,a," "); if (a[1]" "a[2]==k) s=s" "a[3]" "c[kv]} print s}}' "$lines" | sort
