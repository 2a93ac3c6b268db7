#!/usr/bin/env bash
# bench/fd-stall.sh: soak the demo target through one stall, with and
# without an fd leak, and print the fds verdict twice: judged net of the
# load's own connections (fds_net_of_load, as soakd does), and re-read
# from the same samples.csv without that column (all fds, as soakd did
# before). An open loop meets the stall by starting workers, each keeping
# a connection: the tree's fds step up by the load's size. Loopback only;
# each target is started here, ended by its PID, and every run is bounded
# by -d.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/fd-stall.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
work=$(mktemp -d)
tpid=""
cleanup() {
  [ -n "$tpid" ] && kill "$tpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/target" ./testdata/target

# soak NAME TARGET-ARGS...: one 20 s open-loop soak at 300 req/s.
soak() {
  local name=$1; shift
  local dir="$work/$name"
  mkdir -p "$dir"
  "$work/target" --max-lifetime 2m --port-file "$dir/port" "$@" >"$dir/target.log" 2>&1 &
  tpid=$!
  for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
  "$SOAKD" run -q --pid "$tpid" --rate 300 -c 64 -d 20s --cooldown 2s --out "$dir/out" "http://$(cat "$dir/port")/" >"$dir/run.txt" 2>&1 || true
  kill "$tpid" 2>/dev/null || true
  wait "$tpid" 2>/dev/null || true
  tpid=""
  python3 - "$dir/out/samples.csv" "$dir/whole.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = [c for c in rows[0] if c != "fds_net_of_load"]
w = csv.DictWriter(open(sys.argv[2], "w"), fieldnames=cols, extrasaction="ignore")
w.writeheader()
w.writerows(rows)
PY
  echo "== $name ($*)"
  grep -E '^\s*fds ' "$dir/out/report.txt" | head -1 | sed 's/^ */net of the load: /' | cut -c1-220
  "$SOAKD" analyze "$dir/whole.csv" 2>/dev/null | grep -E '^\s*fds ' | head -1 | sed 's/^ */all fds:          /' | cut -c1-220
}

soak clean-3000 --stall-at 3000 --stall-for 300ms
soak clean-5200 --stall-at 5200 --stall-for 400ms
soak leak-620 --leak-fd-every 100 --stall-at 620 --stall-for 400ms
soak leak-700 --leak-fd-every 100 --stall-at 700 --stall-for 400ms
soak leak-1500 --leak-fd-every 100 --stall-at 1500 --stall-for 400ms
