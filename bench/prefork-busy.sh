#!/usr/bin/env bash
# bench/prefork-busy.sh: the zoo's recycled rows (bench/zoo.sh) re-run N
# times each on a busy machine, with the zoo's command (-n 3000 --rate
# 200, default flags), counting the fds, rss and run verdicts:
#
#   prefork-no-leak   --workers 3 --max-requests 150 --leak-bytes 0
#   prefork-recycled  the same, --leak-bytes 65536
#   supervised        --workers 1 --restart-every 2s --leak-bytes 65536
#
# Run it under bench/busy.sh (one busy loop per core at nice -5): there
# the open loop's connections pile up in the prefork workers, which read
# an fds leak before each process's fds were netted of its connections to
# soakd (procs.csv's load_conns). Each run's directory is kept under OUT
# (default a temporary directory, printed); every run is also re-analysed
# with procs.csv's load_conns column cut off, which is how the build
# before it fitted the lives (all of each process's fds): a paired
# before/after on the same runs. Loopback only; each server is ended by
# its process group; every run is bounded by -n (3000 requests at 200/s).
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd N=10 bash bench/busy.sh bash bench/prefork-busy.sh
#   ROWS=prefork-no-leak ...   only the rows named (a comma-separated list)
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
N=${N:-3}
ROWS=${ROWS:-prefork-no-leak,prefork-recycled,supervised}
OUT=${OUT:-$(mktemp -d /tmp/prefork-busy.XXXX)}
echo "runs kept under $OUT" >&2
declare -A args=(
  [prefork-no-leak]="--workers 3 --max-requests 150 --leak-bytes 0"
  [prefork-recycled]="--workers 3 --max-requests 150 --leak-bytes 65536"
  [supervised]="--workers 1 --restart-every 2s --leak-bytes 65536"
)
work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && { kill -TERM -- "-$pid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work" ./testdata/recycle

summary() { # REPORT NAME LABEL
  python3 - "$@" <<'PY'
import json, sys
path, name, label = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{name:17} {label:7} error: {e}")
    sys.exit()
def res(n):
    x = r["resources"].get(n)
    if not x:
        return f"{n}=-"
    m = " masked" if x.get("masked_by") else ""
    return f"{n}={x['verdict']}{m} {x['per_request']:.3g}"
print(f"{name:17} {label:7} run={r['verdict']:12} {res('fds'):32} {res('rss')}")
PY
}

for ((i = 1; i <= N; i++)); do
  IFS=, read -ra names <<<"$ROWS"
  for name in "${names[@]}"; do
    d="$OUT/$name.$i"
    mkdir -p "$d"
    pf="$work/port"
    rm -f "$pf"
    # shellcheck disable=SC2086
    setsid "$work/recycle" ${args[$name]} --max-lifetime 5m --port-file "$pf" >"$d/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [[ -s $pf ]] && break; sleep 0.1; done
    "$SOAKD" run -q --json --out "$d/run" -n 3000 --rate 200 "http://$(tr -d '\n' <"$pf")/" >"$d/report.json" 2>"$d/soakd.err" || true
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    summary "$d/report.json" "$name" after
    # The same run, judged as before: procs.csv without load_conns.
    mkdir -p "$d/before"
    cp "$d/run/samples.csv" "$d/before/"
    cut -d, -f1-13 "$d/run/procs.csv" >"$d/before/procs.csv"
    "$SOAKD" analyze --json "$d/before/samples.csv" >"$d/before.json" 2>/dev/null || true
    summary "$d/before.json" "$name" before
  done
done
