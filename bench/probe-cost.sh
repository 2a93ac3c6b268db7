#!/usr/bin/env bash
# bench/probe-cost.sh: soakd's CPU per sample (report.json's
# sampling.probe_cost_seconds) and the paced interval on a prefork tree
# under bench/busy.sh, two builds interleaved (issue 41, item 4):
# testdata/recycle --workers 3 --max-requests 150 --leak-bytes 0, the
# zoo's command (-n 3000 --rate 200, default flags), N runs per build.
# On a busy machine the open loop's connections pile up in the workers
# (50-130 each), which every sample counts per process (load_conns).
#
#   git archive OLD | tar -x -C /tmp/old && (cd /tmp/old && go build -o /tmp/soakd-old ./cmd/soakd)
#   go build -o /tmp/soakd ./cmd/soakd
#   BEFORE=/tmp/soakd-old AFTER=/tmp/soakd N=3 bash bench/probe-cost.sh
#
# Loopback only; each server is ended by its process group; every run is
# bounded by -n. Each run's directory is kept under OUT (printed).
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${BEFORE:?set BEFORE to a built soakd}
AFTER=${AFTER:?set AFTER to a built soakd}
N=${N:-3}
OUT=${OUT:-$(mktemp -d /tmp/probe-cost.XXXX)}
echo "runs kept under $OUT" >&2
work=$(mktemp -d)
go build -o "$work" ./testdata/recycle
pid=
cleanup() {
  [[ -n $pid ]] && { kill -TERM -- "-$pid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
for ((i = 1; i <= N; i++)); do
  for which in before after; do
    bin=$AFTER
    [[ $which == before ]] && bin=$BEFORE
    d="$OUT/$which.$i"
    mkdir -p "$d"
    pf="$work/port"
    rm -f "$pf"
    setsid "$work/recycle" --workers 3 --max-requests 150 --leak-bytes 0 --max-lifetime 5m --port-file "$pf" >"$d/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [[ -s $pf ]] && break; sleep 0.1; done
    bash bench/busy.sh "$bin" run -q --json --out "$d/run" -n 3000 --rate 200 "http://$(tr -d '\n' <"$pf")/" >"$d/report.json" 2>"$d/soakd.err" || true
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    python3 - "$d/report.json" "$which" "$d/run/procs.csv" <<'PY'
import csv, json, sys
path, which, procs = sys.argv[1:]
try:
    r = json.load(open(path))
    s = r["sampling"]
except Exception as e:
    print(f"{which:6} error: {e}")
    sys.exit()
rows = list(csv.DictReader(open(procs)))
lc = [int(x["load_conns"]) for x in rows if x.get("load_conns")]
print(f"{which:6} {s['probe_cost_seconds']*1e3:.2f} ms/sample, interval "
      f"{s.get('min_interval_seconds', 0)*1e3:.0f}-{s.get('max_interval_seconds', 0)*1e3:.0f} ms, "
      f"{100*s['cpu_share']:.2f} % of a core, {r['phases'].get('soak_samples')} soak samples, "
      f"load_conns max {max(lc) if lc else '-'}, fds {r['resources'].get('fds', {}).get('verdict')}")
PY
  done
done
