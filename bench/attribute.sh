#!/usr/bin/env bash
# bench/attribute.sh: per-endpoint attribution (issue 23 item 1) with the
# built soakd's DEFAULT flags, a two-endpoint --targets file and a bound
# -n, against servers whose leaking endpoint is known; prints, per server,
# the truth and each endpoint's verdict and figure for rss. Loopback only;
# every server is started here and ended by its process group.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/attribute.sh [ROUNDS]
#
# ROWS="go-heap jvm" runs only those rows (default: all); KEEP=DIR keeps
# each run's --out in DIR/NAME-N (liveheap.csv, samples.csv, report.json). The go-heap
# target serves its heap profile (--pprof), from which soakd reads the
# live heap at each block's end; the jvm row's split is read from the JVM's
# hsperfdata counters after each young collection (JVM_N sets its -n,
# default 100000; its truth, 534 B, is the class histograms' growth per
# request of /leak). The node-heap row starts leak.js with its inspector
# on a free loopback port (node --inspect=127.0.0.1:0) and gives soakd
# --node-inspect, which reads the live heap there at each block's end
# (its truth, 705 B: a Buffer's 512 B outside the V8 heap and its
# wrapper's 193 B inside). The split's source is printed.
#
# Needs gcc, python3, node and java (JDK 11+, run from source).
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
rounds=${1:-1}
runs=0
rows=" ${ROWS:-c-scgi c-clean go-root go-heap py node node-heap jvm} "
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c
go build -o "$work" ./testdata/target

# start NAME CMD...: runs CMD with --port-file in a process group of its
# own, waits for the port, and sets $base (no trailing slash).
start() {
  local name=$1; shift
  local pf="$work/$name.port"
  rm -f "$pf"
  setsid "$@" --port-file "$pf" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do [[ -s $pf ]] && break; sleep 0.1; done
  base="http://$(tr -d '\n' <"$pf")"
}

# soak NAME TRUTH PATH-LEAKY PATH-CLEAN SOAKD-ARGS...: soaks the two paths
# at weight 1 each and prints rss's split.
soak() {
  local name=$1 truth=$2 leaky=$3 clean=$4; shift 4
  printf '1 GET %s%s\n1 GET %s%s\n' "$base" "$leaky" "$base" "$clean" >"$work/$name.targets"
  local out="$work/$name.json"
  local keep=()
  if [[ -n ${KEEP:-} ]]; then
    runs=$((runs + 1))
    keep=(--out "$KEEP/$name-$runs")
  fi
  "$SOAKD" run -q --json --targets "$work/$name.targets" "${keep[@]}" "$@" >"$out" 2>"$work/$name.err" || true
  python3 - "$out" "$name" "$truth" <<'PY'
import json, sys
path, name, truth = sys.argv[1:]
try:
    r = json.load(open(path))
    x = r["resources"]["rss"]
except Exception as e:
    print(f"{name:12} {truth:26} error: {e}")
    sys.exit()
eps = "; ".join(f"{e['endpoint']} {e['verdict']} {e['per_request']:.1f} B/req (CI {e['ci95'][0]:.1f}–{e['ci95'][1]:.1f})" + (f" [{e['source']}]" if e.get('source') else "")
                for e in x.get("endpoints") or [])
gc = r["target"].get("collector") or "-"
print(f"{name:12} {truth:26} rss={x['verdict']} {x['per_request']:.1f} B/req (CI {x['ci95'][0]:.1f}–{x['ci95'][1]:.1f}) | {eps} | {r['load']['requests']} req in {r['load']['duration_seconds']:.1f} s | collector {gc}")
PY
  kill -TERM -- "-${pids[-1]}" 2>/dev/null || true
}

printf '%-12s %-26s %s\n' server truth "rss and its split (default flags)"
# row NAME: whether ROWS asks for it.
row() { [[ $rows == *" $1 "* ]]; }

for _ in $(seq "$rounds"); do
  if row c-scgi; then
    start c-scgi "$work/httpd" --leak-bytes 100 --leak-path /s/ --max-lifetime 600
    soak c-scgi "/s/scgi/ 100 B/req" /s/scgi/ /static.html -n 200000
  fi
  if row c-clean; then
    start c-clean "$work/httpd" --max-lifetime 600
    soak c-clean "both clean" /s/scgi/ /static.html -n 200000
  fi
  if row go-root; then
    start go-root "$work/target" --leak-bytes 100
    soak go-root "/ 100 B/req (Go, mmap)" / /static -n 200000
  fi
  if row go-heap; then
    start go-heap "$work/target" --heap-leak-bytes 512 --pprof
    soak go-heap "/ 512 B/req (Go heap)" / /static -n 200000
  fi
  if row py; then
    start py python3 testdata/zoo/leak.py --leak-bytes 512 --leak-path /leak
    soak py "/leak 512 B/req (Python)" /leak /ok -n 100000
  fi
  if row node; then
    start node node testdata/zoo/leak.js --leak-bytes 512 --leak-path /leak
    soak node "/leak 512 B/req (Node)" /leak /ok -n 100000
  fi
  if row node-heap; then
    start node-heap node --inspect=127.0.0.1:0 testdata/zoo/leak.js --leak-bytes 512 --leak-path /leak
    inspect=$(sed -n 's|^Debugger listening on ws://\([0-9.]*:[0-9]*\)/.*|\1|p' "$work/node-heap.log" | head -1)
    soak node-heap "/leak 705 B/req (Node heap)" /leak /ok -n 100000 --node-inspect "$inspect"
  fi
  if row jvm; then
    start jvm java testdata/zoo/Leak.java --leak-bytes 512 --leak-path /leak
    soak jvm "/leak 534 B/req (JVM)" /leak /ok -n "${JVM_N:-100000}"
  fi
done
