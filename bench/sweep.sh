#!/usr/bin/env bash
# bench/sweep.sh: `soakd sweep` with its default level duration (or
# LEVEL=…) against the sweep's test servers (testdata/sweepzoo) and nginx,
# printing server, expected cause, knee, per-connection fit and USL.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/sweep.sh
#
# Every server listens on 127.0.0.1 from port 0 and is stopped by its PID.
set -euo pipefail
SOAKD=${SOAKD:?set SOAKD to a built soakd}
LEVEL=${LEVEL:-5s}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cc -O2 -pthread -o "$work/sweepzoo" "$(dirname "$0")/../testdata/sweepzoo/sweepzoo.c"

# start NAME ARGS...: start sweepzoo, set URL and PID.
start() {
	local name=$1
	shift
	rm -f "$work/$name.port"
	"$work/sweepzoo" --max-lifetime 900 --port-file "$work/$name.port" "$@" &
	PID=$!
	pids+=("$PID")
	for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.1; done
	URL="http://$(cat "$work/$name.port")/"
}

# run NAME EXPECTED LEVELS [soakd flags...]
run() {
	local name=$1 want=$2 levels=$3
	shift 3
	"$SOAKD" sweep -q --json --levels "$levels" --level-duration "$LEVEL" --pid "$PID" "$@" "$URL" >"$work/$name.json" 2>"$work/$name.err" || true
	python3 - "$work/$name.json" "$name" "$want" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k, u, pc = r["knee"], r["usl"], r["per_connection"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {k['cause']} at {k['concurrency']} | "
      f"{pc['rss_bytes']/1024:.1f} KiB, {pc['fds']:.2f} fds/conn, ceiling {pc['ceiling_connections']:.0f} | "
      f"σ {u['sigma']:.3g}, κ {u['kappa']:.3g}, r² {u['r2']:.3f} | {len(r['levels'])} |")
PY
	kill "$PID" 2>/dev/null || true
}

echo "| server | expected | knee | per connection | USL | levels |"
echo "|---|---|---|---|---|---|"
start burn --mode burn --burn-us 2000
run burn cpu 1,2,4,8,16
start backlog --mode backlog --delay-ms 0 --stall-ms 300 --stall-every-ms 1000
run backlog listen_queue 1,8,32 --timeout 10s
start select --mode select --delay-ms 200
run select fd_limit 100,300,600,1100 --timeout 3s
start serial --mode serial --delay-ms 5
run serial serial 1,2,5,10
start threads --mode threads --delay-ms 20
run threads per_connection 1,2,5,10,20,50,100
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$work/nginx.conf" <<NG
daemon off; master_process on; worker_processes 1; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work; uwsgi_temp_path $work; scgi_temp_path $work;
server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } } }
NG
	"$(command -v nginx || echo /usr/sbin/nginx)" -c "$work/nginx.conf" -p "$work" -e "$work/error.log" &
	PID=$!
	pids+=("$PID")
	sleep 1
	URL="http://127.0.0.1:$port/"
	run nginx "none or cpu" 1,2,5,10,20,50
fi
