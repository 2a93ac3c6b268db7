#!/usr/bin/env bash
# bench/zoo.sh: run the built soakd with its DEFAULT flags against every
# server the tests spawn, and print one line each: server, truth, verdict
# and the figure behind it. Loopback only; every server is started here,
# ended by its PID (its process group for the ones that fork), and every
# run is bounded by -n.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/zoo.sh
#
# Needs gcc, python3, node, java and nginx (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c
go build -o "$work" ./testdata/target ./testdata/recycle ./testdata/cpuzoo

# start NAME CMD...: runs CMD with --port-file in a process group of its
# own, waits for the port, and sets $url.
start() {
  local name=$1; shift
  local pf="$work/$name.port"
  setsid "$@" --port-file "$pf" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do [[ -s $pf ]] && break; sleep 0.1; done
  url="http://$(tr -d '\n' <"$pf")/"
}

# soak NAME TRUTH RESOURCE SOAKD-ARGS...: runs soakd with its defaults
# plus the load's bounds, and prints the resource's verdict and figure.
soak() {
  local name=$1 truth=$2 res=$3; shift 3
  local out="$work/$name.json"
  "$SOAKD" run -q --json "$@" "$url" >"$out" 2>"$work/$name.err" || true
  python3 - "$out" "$name" "$truth" "$res" <<'PY'
import json, sys
path, name, truth, res = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{name:34} {truth:28} error: {e}")
    sys.exit()
if res == "cpu":
    c = r["cpu"]
    print(f"{name:34} {truth:28} {c['bound']:12} {c['reason'][:150]}")
else:
    x = r["resources"][res]
    fig = f"{x['per_request']:.3g} {x['unit']}/request, CI {x['ci95'][0]:.3g}–{x['ci95'][1]:.3g}"
    extra = f" masked_by={x['masked_by']} replacements={x['replacements']}" if x.get("masked_by") else ""
    print(f"{name:34} {truth:28} {res}={x['verdict']:12} {fig}{extra}  (run {r['verdict']})")
PY
  kill -TERM -- "-${pids[-1]}" 2>/dev/null || true
}

# c-flat and nginx serve 1 000 000 requests: "stable" needs the interval
# under the lowest floor in force, and the horizon floor (64 MiB a day) is
# finer than a page over 200 000 requests at 50 000 req/s (a page over at
# least 5.3 s of soak at any rate).
printf '%-34s %-28s %s\n' server truth "verdict (default flags)"
start c-fast-leak "$work/httpd" --leak-bytes 120;              soak c-fast-leak "leak 120 B/req" rss -n 200000
start c-flat "$work/httpd" --leak-bytes 0;                     soak c-flat "flat" rss -n 1000000
start c-slow-leak "$work/httpd" --leak-bytes 8;                soak c-slow-leak "leak 8 B/req" rss -n 2000000
start c-shrink-idle "$work/httpd" --leak-bytes 200 --mode shrink --pool-mib 64
soak c-shrink-idle "leak 200 B/req, idle shrink" rss -n 200000 --cooldown 4s
start py-leak python3 testdata/zoo/leak.py --leak-bytes 2048;  soak py-leak "leak ~2 KiB/req" rss -n 40000
start node-leak node testdata/zoo/leak.js --leak-bytes 4096;   soak node-leak "leak ~4 KiB/req" rss -n 60000
start jvm-leak java testdata/zoo/Leak.java --leak-bytes 1024; soak jvm-leak "leak 1 KiB/req (heap steps)" rss -n 1000000
start jvm-flat java testdata/zoo/Leak.java --leak-bytes 0;     soak jvm-flat "flat (young gen touched)" rss -n 200000
start go-short "$work/target" --sleep 5ms;                    soak go-short "flat, 10 s of Go warm-up" rss -d 10s
start go-leak "$work/target" --leak-bytes 2048;                soak go-leak "leak 2 KiB/req" rss -n 100000
start go-clean "$work/target";                                 soak go-clean "flat" rss -n 100000
start go-fd-leak "$work/target" --leak-fd-every 100;           soak go-fd-leak "1 fd per 100 req" fds -n 100000
start go-cache "$work/target" --cache-entries 4000 --cache-entry-bytes 8192
soak go-cache "cache fills, then flat" rss -n 100000
start prefork-recycled "$work/recycle" --workers 3 --max-requests 150 --leak-bytes 65536
soak prefork-recycled "leak 64 KiB/req, recycled" rss -n 3000 --rate 200
start prefork-no-leak "$work/recycle" --workers 3 --max-requests 150 --leak-bytes 0
soak prefork-no-leak "no leak, recycled" rss -n 3000 --rate 200
start supervised "$work/recycle" --workers 1 --restart-every 2s --leak-bytes 65536
soak supervised "leak 64 KiB/req, restarted" rss -n 3000 --rate 200
start cpu-event-loop "$work/cpuzoo" --shape loop --work burn --cost 2ms --helpers 11
soak cpu-event-loop "cpu (one thread)" cpu -n 4000 -c 8
start cpu-prefork "$work/cpuzoo" --shape prefork --workers 4 --work burn --cost 2ms
soak cpu-prefork "cpu (4 workers)" cpu -n 4000 -c 8
start cpu-write-loop "$work/cpuzoo" --shape loop --work write --cost 2ms --helpers 2
soak cpu-write-loop "cpu, kernel-heavy" cpu -n 4000 -c 8

mkdir -p "$work/ngx/logs"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/ngx/nginx.conf" <<EOF
daemon off; worker_processes 1; pid $work/ngx/nginx.pid; error_log $work/ngx/error.log;
events {}
http { access_log off; server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } } }
EOF
setsid nginx -c "$work/ngx/nginx.conf" -p "$work/ngx" >/dev/null 2>&1 &
pids+=($!)
sleep 1
url="http://127.0.0.1:$port/"
soak nginx "flat" rss -n 1000000
