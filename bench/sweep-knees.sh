#!/usr/bin/env bash
# bench/sweep-knees.sh: is the sweep's knee stable? RUNS sweeps (default
# 3) of each of three servers: nginx (one worker, answering from memory),
# a threaded Python server (testdata/sweepzoo/threaded.py) and a serial
# one (sweepzoo --mode serial: select(), listen backlog 2, a 5 ms sleep
# per request). One Markdown row per sweep: the load average when it
# started, the knee, whether it was confirmed, why the ladder stopped, the
# suggested soak and the sweep's command.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/sweep-knees.sh
#
# LEVELS (default 1,2,5,10,20,50) and LEVEL (default 5s) shape each sweep.
# Every server listens on 127.0.0.1 from a free port and is stopped by its
# PID; each sweep is bounded by its ladder.
set -euo pipefail
SOAKD=${SOAKD:?set SOAKD to a built soakd}
RUNS=${RUNS:-3}
LEVELS=${LEVELS:-1,2,5,10,20,50}
LEVEL=${LEVEL:-5s}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cc -O2 -pthread -o "$work/sweepzoo" "$here/testdata/sweepzoo/sweepzoo.c"

# wait_port FILE: wait until a server wrote HOST:PORT to FILE; set URL.
wait_port() {
	for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.1; done
	URL="http://$(cat "$1")/"
}

start_serial() {
	rm -f "$work/port"
	"$work/sweepzoo" --mode serial --delay-ms 5 --max-lifetime 900 --port-file "$work/port" &
	PID=$!
	pids+=("$PID")
	wait_port "$work/port"
}

start_python() {
	rm -f "$work/port"
	python3 "$here/testdata/sweepzoo/threaded.py" --max-lifetime 900 --port-file "$work/port" &
	PID=$!
	pids+=("$PID")
	wait_port "$work/port"
}

start_nginx() {
	local port
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
	URL="http://127.0.0.1:$port/"
	for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break; sleep 0.1; done
}

echo "| server | run | load avg | knee | confirmed | stopped | suggested soak | throughput at the knee |"
echo "|---|---|---|---|---|---|---|---|"
for server in nginx python serial; do
	if [ "$server" = nginx ] && ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
		echo "| nginx | - | - | nginx is not installed | | | | |"
		continue
	fi
	"start_$server"
	for run in $(seq "$RUNS"); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		cmd=("$SOAKD" sweep -q --json --levels "$LEVELS" --level-duration "$LEVEL" --timeout 10s --pid "$PID" "$URL")
		"${cmd[@]}" >"$work/out.json" 2>"$work/err" || { echo "| $server | $run | $load | sweep failed: $(tail -1 "$work/err") | | | | |"; continue; }
		python3 - "$work/out.json" "$server" "$run" "$load" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k, s = r["knee"], r["suggestion"]
at = next((l for l in r["levels"] if l["concurrency"] == k["concurrency"]), r["levels"][-1])
rows = ", ".join(f"{l['concurrency']}:{l['throughput']:.0f}" for l in r["levels"])
n = k["concurrency"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {n} client{'' if n == 1 else 's'}, {k['cause']} | "
      f"{'yes' if k.get('confirmed') else 'no'} | {r.get('stopped', '') or '-'} | -c {s['concurrency']} --rate {s['rate']:g} | "
      f"{at['throughput']:.0f} req/s (levels {rows}) |")
PY
	done
	kill "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
done
echo
echo "sweep command: $SOAKD sweep --levels $LEVELS --level-duration $LEVEL --timeout 10s --pid PID URL"
