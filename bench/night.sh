#!/usr/bin/env bash
# bench/night.sh: a scripted 8-hour night of `soakd serve`, compressed
# (issue 43, item 6). Four jobs soak four real servers on loopback every
# RUN_EVERY seconds while faults come on a timetable; a real Alertmanager
# and soakd's own webhook sink both report to one receiver
# (bench/night-hook.py) that writes each notification with its time. At
# the end bench/night-check.py puts the timetable and the notifications
# side by side and checks them: every finding paged once per sink, none
# lost, none paged again after its fix, nothing unexpected. It prints
# soakd's own RSS, CPU and disk over the night. Exit 1 when a check fails.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/night.sh
#
# NIGHT_SECONDS (default 2100, 35 min) is how long the 8 hours last; the
# timetable below is in night time (HH:MM) and scales with it. OUT
# (default a new temporary directory) keeps the timetable, the
# notifications, soakd's samples and logs. The servers:
#
#   leaker   demo target, long-lived, leaks 16 KiB a request from 01:00
#   fixed    demo target leaking 16 KiB a request; at 05:00 restarted clean
#   crasher  demo target, SIGKILLed mid-run at 03:00, restarted at 03:20
#   failing  faultd, answers 500 from 02:00 to 06:00 (restarted in that mode)
#
# and the faults: Alertmanager stopped (SIGTERM, its data kept) 01:30-02:30;
# soakd SIGKILLed between runs at 03:40 and mid-run at 04:30, restarted on
# the same store; the store's disk (a 64 MiB tmpfs this script mounts, so
# it runs as root) filled by a file 06:30-07:00. Everything listens on
# 127.0.0.1; every process is started here, ended by its PID and bounded by
# --max-lifetime; the tmpfs is unmounted at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
NIGHT_SECONDS=${NIGHT_SECONDS:-2100}
RUN_EVERY=${RUN_EVERY:-30}
AM=${AM:-/usr/bin/prometheus-alertmanager}
OUT=${OUT:-$(mktemp -d /tmp/soakd-night.XXXXXX)}
mkdir -p "$OUT"
[ -x "$AM" ] || { echo "night.sh: $AM missing: apt-get install prometheus-alertmanager, or set AM" >&2; exit 2; }
[ "$NIGHT_SECONDS" -ge 480 ] || { echo "night.sh: NIGHT_SECONDS=$NIGHT_SECONDS: want >= 480 (a night hour must hold 2 runs)" >&2; exit 2; }
life=$((NIGHT_SECONDS + 600))s

pids=()      # every process started here, ended by PID at exit
state="$OUT/state"
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$state/filler"
  mountpoint -q "$state" && umount "$state"
  return 0
}
trap cleanup EXIT

go build -o "$OUT/target" ./testdata/target
go build -o "$OUT/faultd" ./testdata/faultd

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
waitfile() { for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.1; done; echo "night.sh: $1 never written" >&2; exit 1; }

T0=$(date +%s.%N)
# at HH:MM: sleep until that night time.
at() {
  local h=${1%:*} m=${1#*:}
  local real
  real=$(python3 -c "print($T0 + (${h#0}*60 + ${m#0}) * 60 * $NIGHT_SECONDS / 28800.0)")
  local now; now=$(date +%s.%N)
  python3 -c "import time; d=$real-$now; time.sleep(d if d>0 else 0)"
}
# event HH:MM KEY TEXT: the timetable's line, with the real time: just
# before the fault, so that nothing it causes comes before it.
event() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(date +%s.%N)" "$3" >>"$OUT/timetable.tsv"; echo "$(date -u +%T) $1 $3"; }

# The receiver, Alertmanager, the state's tmpfs.
python3 bench/night-hook.py "$OUT/hook.port" "$OUT/notifications.jsonl" $((NIGHT_SECONDS + 600)) &
pids+=($!)
waitfile "$OUT/hook.port"
hook=127.0.0.1:$(cat "$OUT/hook.port")
amport=$(freeport)
cat >"$OUT/alertmanager.yml" <<EOF
route:
  receiver: hook
  group_by: [alertname, job, resource]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 24h
receivers:
  - name: hook
    webhook_configs:
      - url: http://$hook/am
        send_resolved: true
EOF
am_pid=""
am_start() {
  "$AM" --config.file="$OUT/alertmanager.yml" --storage.path="$OUT/am-data" --web.listen-address=127.0.0.1:$amport \
    --cluster.listen-address= --log.level=warn >>"$OUT/alertmanager.log" 2>&1 &
  am_pid=$!
  pids+=($am_pid)
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$amport/-/ready" >/dev/null && return 0; sleep 0.1; done
  echo "night.sh: Alertmanager not ready" >&2; exit 1
}
am_stop() { kill -TERM "$am_pid"; wait "$am_pid" 2>/dev/null || true; }
am_start
mkdir -p "$state"
mount -t tmpfs -o size=64m tmpfs "$state"

# The servers. start_target NAME FLAGS...: a demo target on NAME's port
# (a free one the first time), its PID in NAME.pid.
declare -A port
start_target() {
  local name=$1; shift
  local listen=127.0.0.1:${port[$name]:-0}
  rm -f "$OUT/$name.port"
  "$OUT/target" --listen "$listen" --port-file "$OUT/$name.port" --pid-file "$OUT/$name.pid" --max-lifetime "$life" "$@" \
    >>"$OUT/$name.log" 2>&1 &
  pids+=($!)
  waitfile "$OUT/$name.port"
  port[$name]=$(cut -d: -f2 "$OUT/$name.port")
  warm "$name"
}
start_faultd() {
  local listen=127.0.0.1:${port[failing]:-0}
  rm -f "$OUT/failing.port"
  "$OUT/faultd" -addr "$listen" -port-file "$OUT/failing.port" -pid-file "$OUT/failing.pid" -max-lifetime "$life" -mode "$1" \
    >>"$OUT/failing.log" 2>&1 &
  pids+=($!)
  waitfile "$OUT/failing.port"
  port[failing]=$(cut -d: -f2 "$OUT/failing.port")
  warm failing
}
# warm NAME: 3000 requests before soakd first sees NAME's new process, as a
# server in service has had: a fresh Go server's runtime sizes itself over
# its first thousands of requests, and a 10 s soak of that reads as a leak.
warm() { "$SOAKD" run -q --no-probe -n 3000 -c 4 --out "$OUT/warm-$1" "http://127.0.0.1:${port[$1]}/" >/dev/null 2>&1 || true; rm -rf "$OUT/warm-$1"; }
stop_pidfile() { local p; p=$(cat "$1"); kill "$2" "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; }

leak_after=$(python3 -c "print(int(3600 * $NIGHT_SECONDS / 28800))")s
start_target leaker --leak-bytes 16384 --leak-after "$leak_after"
start_target fixed --leak-bytes 16384
start_target crasher
start_faultd ok

sport=$(freeport)
job() {
  cat <<EOF
  - name: $1
    schedule: "@every ${RUN_EVERY}s"
    max_duration: 2m
    alerts: [am, hook]
    target:
      pidfile: $OUT/$1.pid
    load:
      url: http://127.0.0.1:${port[$1]}/
      rate: 100
      concurrency: 2
      duration: 10s
      timeout: 5s
    sampling:
      interval: 200ms
      smaps_interval: 1s
    phases:
      baseline: 1s
      warmup: "0"
      cooldown: 3s
    where:
      off: true
EOF
}
{
  cat <<EOF
listen: 127.0.0.1:$sport
state_dir: $state
log_level: info
alerts:
  repeat_interval: 24h
  retry: {initial: 1s, max: 10s}
  sinks:
    - name: am
      type: alertmanager
      urls: [http://127.0.0.1:$amport]
    - name: hook
      type: webhook
      url: http://$hook/hook
jobs:
EOF
  for j in leaker fixed crasher failing; do job $j; done
} >"$OUT/soakd.yaml"
api=http://127.0.0.1:$sport

soakd_pid=""
soakd_start() {
  "$SOAKD" serve --config "$OUT/soakd.yaml" >>"$OUT/soakd.log" 2>&1 &
  soakd_pid=$!
  pids+=($soakd_pid)
  echo "$soakd_pid" >"$OUT/soakd.pid"
  for _ in $(seq 600); do curl -sf "$api/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "night.sh: soakd not serving; see $OUT/soakd.log" >&2; exit 1
}
soakd_kill() { kill -KILL "$soakd_pid"; wait "$soakd_pid" 2>/dev/null || true; }
# jobwait JOB idle|busy: wait (at most 3 runs' time) until JOB (every job
# when JOB is "") is between two runs, its last one ended over 2 s ago
# (its pages confirmed) and the next over 5 s away; or until a run of JOB
# starts, and then 3 s more (mid-run).
jobwait() {
  python3 - "$api" "$1" "$2" "$RUN_EVERY" <<'PY'
import json, sys, time, urllib.request
from datetime import datetime
api, job, want, every = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
end = time.time() + 3 * every
def ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() if s else None
def idle(j):
    nxt, last = ts(j.get("next")), ts((j.get("last_run") or {}).get("ended"))
    return (not j.get("running") and (nxt is None or nxt - time.time() > 5)
            and (last is None or time.time() - last > 2))
seen = None  # the run going when we started looking: not a start
while time.time() < end:
    try:
        jobs = [j for j in json.load(urllib.request.urlopen(api + "/api/v1/jobs", timeout=5)) if job in ("", j["name"])]
    except OSError:
        jobs = None
    if jobs and want == "idle" and all(idle(j) for j in jobs):
        sys.exit(0)
    if jobs and want == "busy":
        j = jobs[0]
        if seen is None:
            seen = j.get("run_id") if j.get("running") else 0
        elif j.get("running") and j.get("run_id") != seen:
            time.sleep(3)
            sys.exit(0)
    time.sleep(0.2)
print(f"night.sh: {job or 'every job'} not {want} within {3 * every:.0f} s; going on", file=sys.stderr)
PY
}

# soakd's own RSS, CPU and the store's disk, every 5 s, while the night lasts.
sample() {
  local end=$(( $(date +%s) + NIGHT_SECONDS + 300 ))
  printf 't\tpid\trss_kib\tcpu_ticks\tdisk_kib\n' >"$OUT/soakd-samples.tsv"
  while [ "$(date +%s)" -lt "$end" ]; do
    local p; p=$(cat "$OUT/soakd.pid")
    if [ -r "/proc/$p/stat" ]; then
      local rss ticks disk
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
      ticks=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)
      disk=$(du -sk --exclude=filler "$state" 2>/dev/null | cut -f1)
      printf '%s\t%s\t%s\t%s\t%s\n' "$(date +%s.%N)" "$p" "${rss:-0}" "${ticks:-0}" "${disk:-0}" >>"$OUT/soakd-samples.tsv"
    fi
    sleep 5
  done
}

: >"$OUT/timetable.tsv"
soakd_start
event 00:00 start "night starts: soakd, Alertmanager, 4 servers; jobs every ${RUN_EVERY}s"
sample &
pids+=($!)

at 01:00; event 01:00 leak "leaker starts leaking 16 KiB a request"
at 01:30; event 01:30 am_down "Alertmanager stopped"; am_stop
at 02:00; jobwait failing idle; event 02:00 fail "failing answers 500"
stop_pidfile "$OUT/failing.pid" -TERM; start_faultd status500
at 02:30; event 02:30 am_up "Alertmanager started"; am_start
at 03:00; jobwait crasher busy; event 03:00 crash "crasher SIGKILLed mid-run"; stop_pidfile "$OUT/crasher.pid" -KILL
at 03:20; event 03:20 crash_back "crasher restarted"; start_target crasher
at 03:40; jobwait "" idle; event 03:40 kill_between "soakd SIGKILLed between runs"; soakd_kill
soakd_start; event 03:40 restart "soakd restarted"
at 04:30; jobwait leaker busy; event 04:30 kill_midrun "soakd SIGKILLed mid-run"; soakd_kill
soakd_start; event 04:30 restart "soakd restarted"
at 05:00; jobwait fixed idle; event 05:00 fix "fixed restarted clean"; stop_pidfile "$OUT/fixed.pid" -TERM; start_target fixed
at 06:00; jobwait failing idle; event 06:00 unfail "failing fixed (answers 200)"
stop_pidfile "$OUT/failing.pid" -TERM; start_faultd ok
at 06:30; event 06:30 disk_full "store's disk full"; dd if=/dev/zero of="$state/filler" bs=64k 2>/dev/null || true
at 07:00; event 07:00 disk_free "store's disk freed"; rm -f "$state/filler"
at 08:00; event 08:00 end "night ends"
sleep 20 # the last sends
curl -sf "$api/api/v1/runs?limit=1000" >"$OUT/runs.json" || true
python3 bench/night-check.py "$OUT" "$NIGHT_SECONDS" "$RUN_EVERY"
