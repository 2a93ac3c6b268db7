#!/usr/bin/env bash
# bench/cpu-false.sh: count false CPU leaks. N short soaks of the zoo's
# clean servers (C, Python, Go, Node, a JVM, nginx), in turn, each at a
# fixed rate, in a closed loop (one worker, as TestZooFlatIsStable) or at
# a fixed rate while two more busy loops run over the soak's middle third
# (a load that varies), or in a closed loop while one more busy loop runs
# over the soak's first half (the machine goes quiet); it prints one line per run and counts the runs
# whose CPU verdict says the cost per request is rising (a CPU leak).
# Run it under bench/busy.sh, which keeps every core busy:
#
#   go build -o /tmp/soakd ./cmd/soakd
#   SOAKD=/tmp/soakd N=60 bash bench/busy.sh bash bench/cpu-false.sh
#
# Each run's samples.csv and report are kept under OUT (default a new
# temporary directory, printed at the end), so the same soaks can be
# judged again by another build without soaking again:
#
#   SOAKD=/tmp/soakd-new bash bench/cpu-false.sh --reanalyze OUT
#
# N (default 30) runs of D (default 20s) each. Loopback only; every
# server is started here and ended by its PID (its process group), every
# soak is bounded by -d, every busy loop by timeout(1).
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
N=${N:-30}
D=${D:-20s}

# judge FILE LABEL: one line for a run's report (JSON), and the count.
leaks=0 runs=0
judge() {
  local line
  line=$(python3 - "$1" "$2" <<'PY'
import json, sys
path, label = sys.argv[1:]
try:
    c = json.load(open(path))["cpu"]
except Exception as e:
    print(f"{label:34} error: {e}")
    sys.exit()
d = c["cost_per_request"]
state = "RISING" if d.get("rising") else ("inconclusive" if d.get("inconclusive") else "not rising")
print(f"{label:34} {state:13} windows {d['windows']:3} change {100*d.get('change', 0):+5.0f} %  others {d.get('contention_start_cores', 0):.2f}->{d.get('contention_end_cores', 0):.2f}  wait {d.get('runqueue_wait_start', 0):.2f}->{d.get('runqueue_wait_end', 0):.2f}  bound {c['bound']}")
PY
)
  echo "$line"
  runs=$((runs + 1))
  [[ $line == *" RISING "* ]] && leaks=$((leaks + 1))
  return 0
}

if [[ ${1:-} == --reanalyze ]]; then
  for dir in "$2"/run-*/; do
    dir=${dir%/}
    workers=$(cat "$dir/workers")
    args=(); [[ $workers != 0 ]] && args=(-c "$workers")
    "$SOAKD" analyze --json "${args[@]}" "$dir/samples.csv" >"$dir/reanalysis.json" 2>"$dir/analyze.err" || true
    judge "$dir/reanalysis.json" "$(cat "$dir/label")"
  done
  echo "runs $runs, CPU cost called rising (a CPU leak) in $leaks"
  exit 0
fi

OUT=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c
go build -o "$work" ./testdata/target

mkdir -p "$work/ngx/logs" "$work/ngx/tmp"
printf 'x%.0s' $(seq 511) >"$work/ngx/index.html"

# start NAME: starts the clean server NAME in a process group of its own
# and sets $url and $rate (its fixed rate: a fraction of what it serves
# alone, so that busy loops still leave it room).
start() {
  local pf="$work/$1.port"
  rm -f "$pf"
  case $1 in
    c) rate=1000; setsid "$work/httpd" --leak-bytes 0 --max-lifetime 120 --port-file "$pf" >/dev/null 2>&1 & ;;
    go) rate=1000; setsid "$work/target" --port-file "$pf" >/dev/null 2>&1 & ;;
    python) rate=200; setsid python3 testdata/zoo/leak.py --leak-bytes 0 --max-lifetime 120 --port-file "$pf" >/dev/null 2>&1 & ;;
    node) rate=500; setsid node testdata/zoo/leak.js --leak-bytes 0 --max-lifetime 120 --port-file "$pf" >/dev/null 2>&1 & ;;
    jvm) rate=500; setsid java testdata/zoo/Leak.java --leak-bytes 0 --max-lifetime 120 --port-file "$pf" >/dev/null 2>&1 & ;;
    nginx)
      rate=1000
      local port
      port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
      cat >"$work/ngx/nginx.conf" <<EOF
daemon off; worker_processes 1; pid $work/ngx/nginx.pid; error_log $work/ngx/error.log;
events {}
http { access_log off; client_body_temp_path $work/ngx/tmp; proxy_temp_path $work/ngx/tmp;
  fastcgi_temp_path $work/ngx/tmp; uwsgi_temp_path $work/ngx/tmp; scgi_temp_path $work/ngx/tmp;
  server { listen 127.0.0.1:$port; root $work/ngx; } }
EOF
      setsid nginx -c "$work/ngx/nginx.conf" -p "$work/ngx" >/dev/null 2>&1 &
      echo "127.0.0.1:$port" >"$pf"
      ;;
  esac
  pids+=($!)
  for _ in $(seq 600); do
    if [[ -s $pf ]] && (exec 3<>"/dev/tcp/$(cut -d: -f1 "$pf")/$(cut -d: -f2 "$pf" | tr -d '\n')") 2>/dev/null; then break; fi
    sleep 0.1
  done
  url="http://$(tr -d '\n' <"$pf")/"
}

# stop: ends the last server started, by its process group.
stop() {
  kill -TERM -- "-${pids[-1]}" 2>/dev/null || true
  wait "${pids[-1]}" 2>/dev/null || true
}

secs=${D%s}
servers=(c go python node jvm nginx)
shapes=(rate closed vary quiet)
for ((i = 0; i < N; i++)); do
  name=${servers[i % ${#servers[@]}]}
  shape=${shapes[(i / ${#servers[@]}) % ${#shapes[@]}]}
  dir="$OUT/run-$(printf %03d "$i")"
  mkdir -p "$dir"
  start "$name"
  args=(--rate "$rate"); workers=0
  [[ $shape == closed || $shape == quiet ]] && { args=(-c 1); workers=1; }
  vary=()
  if [[ $shape == vary ]]; then
    # two more busy loops over the middle third of the soak (the soak
    # starts after a 3 s baseline)
    for _ in 1 2; do
      (sleep $((3 + secs / 3)); exec timeout $((secs / 3)) bash -c 'while :; do :; done') &
      vary+=($!)
    done
  fi
  if [[ $shape == quiet ]]; then
    # one more busy loop from before the soak to its middle: the machine
    # goes quiet mid-soak (a clean C server's cost rose +28 to +108 %)
    (exec timeout $((3 + secs / 2)) bash -c 'while :; do :; done') &
    vary+=($!)
  fi
  "$SOAKD" run -q --out "$dir" -d "$D" --pid "${pids[-1]}" "${args[@]}" "$url" >/dev/null 2>"$dir/run.err" || true
  for j in "${vary[@]}"; do wait "$j" 2>/dev/null || true; done
  stop
  echo "$workers" >"$dir/workers"
  echo "$name $shape" >"$dir/label"
  judge "$dir/report.json" "$name $shape"
done
echo "runs $runs, CPU cost called rising (a CPU leak) in $leaks; samples kept in $OUT"
