#!/usr/bin/env bash
# bench/where.sh: run the built soakd with its default flags against the
# servers that leak in a known place, and print where soakd says the growth
# lives: the mapping class and the top allocation site or class, with the
# figures behind them. Loopback only; every server is started here, ended
# by its PID, and every run is bounded by -n.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/where.sh
#
# Needs gcc and java (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c
go build -o "$work" ./testdata/target

# start NAME CMD...: runs CMD with --port-file, waits for the port, and
# sets $url and $pid.
start() {
  local name=$1; shift
  local pf="$work/$name.port"
  "$@" --port-file "$pf" >"$work/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do [[ -s $pf ]] && break; sleep 0.1; done
  url="http://$(tr -d '\n' <"$pf")/"
}

# where NAME TRUTH SOAKD-ARGS...: soaks with soakd's defaults plus the
# load's bounds, and prints the top mapping and site.
where() {
  local name=$1 truth=$2; shift 2
  local out="$work/$name"
  local t0=$SECONDS
  "$SOAKD" run -q --json --pid "$pid" --out "$out" "$@" "$url" >"$out.json" 2>"$out.err" || true
  python3 - "$out.json" "$name" "$truth" "$((SECONDS - t0))" <<'PY'
import json, sys
path, name, truth, secs = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{name:18} {truth:30} error: {e}")
    sys.exit()
rss = r["resources"]["rss"]
m = rss.get("mappings") or [{}]
s = rss.get("sites") or [{}]
w = r.get("where", {})
mp = f"{m[0].get('name', '-')} {100 * m[0].get('share', 0):.0f} % (+{m[0].get('growth_bytes', 0) / 2**20:.1f} MiB)"
st = f"{s[0].get('site', '-')[:60]} {s[0].get('per_request', 0):.0f} B/req" if s[0] else "-"
ev = sum(f["bytes"] for f in w.get("evidence", []))
print(f"{name:18} {truth:30} rss={rss['verdict']:12} mapping: {mp:32} site: {st}; {w.get('maps_reads', 0)} smaps reads, {1000 * w.get('maps_cost_seconds', 0):.1f} ms each; evidence {ev / 1024:.0f} KiB; {secs} s")
PY
}

start heap "$work/httpd" --leak-bytes 100 --max-lifetime 300
where c-heap "100 B/req malloc: [heap]" -n 200000
start mmap "$work/httpd" --leak-bytes 400 --leak-in mmap --max-lifetime 300
where c-mmap "400 B/req mmap: anonymous" -n 200000
start go "$work/target" --heap-leak-bytes 1000 --pprof --max-lifetime 5m
where go-pprof "1000 B/req in retainHeap" -n 100000
start jvm java testdata/zoo/Leak.java --leak-bytes 1024 --max-lifetime 300
where jvm "1040 B/req byte[]" -n 20000
