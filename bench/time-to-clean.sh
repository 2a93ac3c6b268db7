#!/usr/bin/env bash
# bench/time-to-clean.sh: how long a flat server must be soaked, with
# soakd's default flags, before it reads CLEAN (issue 40, item 2).
#
# For each flat server of the zoo (C on glibc, Python, Go, Node, JVM,
# nginx) it runs ONE soak with default flags but the load's bound (-d,
# default 4m), at 10 req/s (--rate 10) and at full speed (closed loop,
# one connection), keeping each run's directory. Then it re-reads
# prefixes of each run with `soakd analyze`: samples.csv (and procs.csv)
# cut at load times of 30, 45, 60, 90, 120, 172 and 240 s, the first 10 %
# of each prefix relabelled warm-up and the rest soak, as `soakd run -d T`
# would have labelled them (its warm-up default is 10 % of the planned
# run). A prefix is sampled more sparsely than a run of that length
# would be (soakd paces about 300 samples to -d, and PSS/USS about 30
# times), so the times are, if anything, long. It prints per server and
# throughput the first prefix that reads CLEAN and stays CLEAN (soakd's
# verdict, which PSS, USS and CLOSE_WAIT do not hold back when they are
# inconclusive), the first from which every resource is stable or a
# plateau ("all from"), the resources not yet so at each prefix, and the
# physical minimum:
#
#   counts (fds, threads, sockets): a flat count proves at most one unit
#   gained over the soak; under the 1000-per-24 h horizon floor that
#   takes 86 400 / 1000 = 86.4 s of soak at any throughput over 11.6
#   req/s (plus the warm-up: 96 s of load), and 1000 requests under the
#   per-request floor (0.001) below it (at 10 req/s 100 s, 111 s of load);
#   memory: the soak length after which a straight-line fit to the
#   soak's own noise (the robust SD of its samples about their running
#   median of 9, read from the full 4-minute soak, at its sampling rate,
#   widened by √((1+ρ)/(1−ρ)) for the lag-1 autocorrelation ρ of those
#   residuals when it is positive) has a 95 % half-width under the lowest
#   floor in force (64 MiB per
#   24 h, or 16 B/request under 48.5 req/s), and never less than one
#   4 KiB page under it; the largest over the memory resources judged
#   (rss, pss, uss). A series that moves in steps (a JVM's heap) reads
#   no noise about its running median: its minimum is then one page.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/time-to-clean.sh
#
# With UNTIL=1 each soak is `soakd run --until-decided -d DURATION`
# instead, and the table is each run's verdict, what stopped it, its load
# time and what was still undecided (no prefixes are re-read):
#
#   UNTIL=1 DURATION=15m SOAKD=/tmp/soakd bash bench/time-to-clean.sh
#
# Environment: SOAKD (required), DURATION (default 4m), KEEP (a directory
# to keep the runs in; default a temporary one, removed), REUSE=1 (skip
# the soaks and re-read the runs already in KEEP, e.g. with another
# build), ONLY (a space-separated list of servers to run), RATES (default
# "10 full"), CUTS (the prefixes in seconds of load, default "30 45 60 90
# 120 172 240"; with a longer DURATION, e.g. DURATION=10m RATES=10
# CUTS="172 240 300 360 420 480 540 600").
# Loopback only; every server is started here, ended by its PID (its
# process group), and every soak is bounded by -d. Needs gcc, python3,
# node, java and nginx.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD=${SOAKD:?set SOAKD to a built soakd}
DURATION=${DURATION:-4m}
ONLY=${ONLY:-c python go node jvm nginx}
RATES=${RATES:-10 full}
CUTS=${CUTS:-30 45 60 90 120 172 240}
work=$(mktemp -d)
KEEP=${KEEP:-$work/runs}
mkdir -p "$KEEP"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# start NAME CMD...: runs CMD with --port-file in a process group of its
# own, waits for the port, and sets $url.
start() {
  local name=$1; shift
  local pf="$work/$name.port"
  rm -f "$pf"
  setsid "$@" --port-file "$pf" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do [[ -s $pf ]] && break; sleep 0.1; done
  url="http://$(tr -d '\n' <"$pf")/"
}

start_nginx() {
  mkdir -p "$work/ngx/logs"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat >"$work/ngx/nginx.conf" <<EOF
daemon off; worker_processes 1; pid $work/ngx/nginx.pid; error_log $work/ngx/error.log;
events {}
http { access_log off; server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } } }
EOF
  setsid nginx -c "$work/ngx/nginx.conf" -p "$work/ngx" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null && break
    sleep 0.1
  done
  url="http://127.0.0.1:$port/"
}

# server NAME: starts the flat server NAME.
server() {
  case $1 in
    c) start c "$work/httpd" --leak-bytes 0 --max-lifetime 7200 ;;
    python) start python python3 testdata/zoo/leak.py --leak-bytes 0 --max-lifetime 7200 ;;
    go) start go "$work/target" ;;
    node) start node node testdata/zoo/leak.js --leak-bytes 0 --max-lifetime 7200 ;;
    jvm) start jvm java testdata/zoo/Leak.java --leak-bytes 0 --max-lifetime 7200 ;;
    nginx) start_nginx ;;
  esac
}

if [[ ${REUSE:-0} != 1 ]]; then
  gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c
  go build -o "$work" ./testdata/target
  for s in $ONLY; do
    for rate in $RATES; do
      server "$s"
      dir="$KEEP/$s-$rate"
      rm -rf "$dir"
      args=(-q --json --out "$dir" -d "$DURATION")
      [[ $rate == full ]] || args+=(--rate "$rate")
      [[ ${UNTIL:-0} != 1 ]] || args+=(--until-decided)
      echo "$(date -u +%H:%M:%S) soaking $s at $rate" >&2
      "$SOAKD" run "${args[@]}" "$url" >"$dir.json" 2>"$dir.err" || true
      kill -TERM -- "-${pids[-1]}" 2>/dev/null || true
      sleep 1
    done
  done
fi

if [[ ${UNTIL:-0} == 1 ]]; then
  RATES="$RATES" python3 - "$KEEP" $ONLY <<'PY'
import json, os, sys
keep, servers = sys.argv[1], sys.argv[2:]
print(f"{'server':8} {'load':>11} {'verdict':>13} {'stopped by':>11} {'load time':>10}  still undecided")
for s in servers:
    for rate in os.environ["RATES"].split():
        try:
            r = json.load(open(os.path.join(keep, f"{s}-{rate}.json")))
        except Exception as e:
            print(f"{s:8} {rate:>11} no report ({e})")
            continue
        ld = r.get("load") or {}
        u = r.get("until_decided") or {}
        took = ld.get("duration_seconds") or ld.get("elapsed_seconds") or 0
        miss = "; ".join(m[:90] for m in u.get("missing") or [])
        print(f"{s:8} {('full speed' if rate == 'full' else rate + ' req/s'):>11} {r.get('verdict',''):>13} {ld.get('stopped_by',''):>11} {took:9.0f}s  {miss}")
PY
  exit 0
fi

CUTS="$CUTS" RATES="$RATES" python3 - "$SOAKD" "$KEEP" "$work" $ONLY <<'PY'
import csv, json, math, os, shutil, statistics, subprocess, sys
soakd, keep, work, servers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
cuts = [int(c) for c in os.environ["CUTS"].split()]
rates = os.environ["RATES"].split()
HORIZON_COUNT = 1000 / 86400      # counts a second: 1000 per 24 h
PER_REQ_COUNT = 0.001             # counts a request (the per-request floor)
HORIZON_MEM = (64 << 20) / 86400  # bytes a second: 64 MiB per 24 h
PER_REQ_MEM = 16                  # bytes a request
PAGE = 4096
MEM = {"rss": "rss_bytes", "pss": "pss_anon_bytes", "uss": "uss_dirty_bytes"}

def rows_of(path):
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        return head, list(r)

def load_start(head, rows):
    ph, el = head.index("phase"), head.index("elapsed_seconds")
    for row in rows:
        if row[ph] != "baseline":
            return float(row[el])
    return None

def cut(src, dst, t):
    """Copies run dir src's samples (and procs) up to load time t into dst,
    the first 10 % of the load relabelled warmup, the rest soak."""
    os.makedirs(dst, exist_ok=True)
    head, rows = rows_of(os.path.join(src, "samples.csv"))
    t0 = load_start(head, rows)
    ph, el = head.index("phase"), head.index("elapsed_seconds")
    def keep_row(row):
        s = float(row[el])
        if row[ph] == "baseline":
            return row
        if row[ph] == "cooldown" or s - t0 > t:
            return None
        row = list(row)
        row[ph] = "warmup" if s - t0 < 0.1 * t else "soak"
        return row
    out = [k for k in (keep_row(r) for r in rows) if k]
    with open(os.path.join(dst, "samples.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(out)
    p = os.path.join(src, "procs.csv")
    if os.path.exists(p):
        ph2, rows2 = rows_of(p)
        e2, f2 = ph2.index("elapsed_seconds"), ph2.index("phase")
        kept = []
        for r in rows2:
            s = float(r[e2])
            if r[f2] == "baseline":
                kept.append(r)
            elif r[f2] != "cooldown" and s - t0 <= t:
                r = list(r)
                r[f2] = "warmup" if s - t0 < 0.1 * t else "soak"
                kept.append(r)
        with open(os.path.join(dst, "procs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(ph2)
            w.writerows(kept)

def analyze(d):
    p = subprocess.run([soakd, "analyze", "--json", os.path.join(d, "samples.csv")],
                       capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except Exception:
        return {"verdict": "error: " + p.stderr.strip()[:80], "resources": {}}

def mem_minimum(src, rps):
    """The soak length (s) at which a line fitted to the run's own memory
    noise has a 95 % half-width under the floor: 1.96·σ·√(12/(ν·T))/T ≤ FLOOR,
    ν samples a second, σ the robust SD about a running median of 9 (the
    level's slow moves are not noise); at least one page under the floor."""
    head, rows = rows_of(os.path.join(src, "samples.csv"))
    ph, el = head.index("phase"), head.index("elapsed_seconds")
    FLOOR = min(HORIZON_MEM, PER_REQ_MEM * rps)
    worst, why = PAGE / FLOOR, "one page"
    for name, col in MEM.items():
        if col not in head:
            continue
        c = head.index(col)
        pts = [(float(r[el]), float(r[c])) for r in rows if r[ph] == "soak" and r[c] not in ("", "NaN")]
        if len(pts) < 20:
            continue
        pts.sort()
        y = [v for _, v in pts]
        res = []
        for i in range(len(y)):
            w = y[max(0, i - 4):i + 5]
            res.append(y[i] - statistics.median(w))
        mad = statistics.median([abs(r) for r in res])
        sd = 1.4826 * mad
        nu = (len(pts) - 1) / (pts[-1][0] - pts[0][0])
        # the residuals' lag-1 autocorrelation: AR(1) noise widens the
        # line's interval by √((1+ρ)/(1−ρ)) (none when ρ ≤ 0)
        m = statistics.mean(res)
        den = sum((r - m) ** 2 for r in res)
        rho = sum((res[i] - m) * (res[i + 1] - m) for i in range(len(res) - 1)) / den if den > 0 else 0
        ar = math.sqrt((1 + rho) / (1 - rho)) if 0 < rho < 1 else 1
        # 1.96 σ √(12/ν) ar T^(-3/2) ≤ FLOOR
        t = (1.96 * sd * ar * math.sqrt(12 / nu) / FLOOR) ** (2 / 3) if sd > 0 else 0
        if t > worst:
            worst, why = t, f"{name} σ {sd/1024:.0f} KiB ρ {rho:.2f}"
    return worst, why

print(f"{'server':8} {'load':>11} {'req/s':>7} {'CLEAN from':>10} {'all from':>10} {'counts min':>10} {'memory min':>29}  verdicts by prefix (s: verdict (resources not stable or plateau))")
for s in servers:
    for rate in rates:
        src = os.path.join(keep, f"{s}-{rate}")
        if not os.path.exists(os.path.join(src, "samples.csv")):
            print(f"{s:8} {rate:>11} no run")
            continue
        by = []
        rps = 0
        for t in cuts:
            d = os.path.join(work, "cut", f"{s}-{rate}-{t}")
            cut(src, d, t)
            r = analyze(d)
            shutil.rmtree(d)
            open_ = sorted(n for n, x in r.get("resources", {}).items() if x["verdict"] not in ("stable", "plateau"))
            ph = r.get("phases", {})
            if ph.get("soak_seconds"):
                rps = ph["soak_requests"] / ph["soak_seconds"]
            by.append((t, r["verdict"], open_))
        def stays(ok):
            for i in range(len(by)):
                if all(ok(x) for x in by[i:]):
                    return by[i][0]
            return None
        first = stays(lambda x: x[1] == "clean")
        every = stays(lambda x: x[1] == "clean" and not x[2])
        mm, why = mem_minimum(src, rps)
        # the physical minima in load time: the soak's minimum over 0.9
        # (the warm-up is 10 % of the planned run); one unit under the
        # lowest floor in force
        cmin = 1 / min(HORIZON_COUNT, PER_REQ_COUNT * rps) / 0.9
        fcl = f"{first} s" if first else f"not by {cuts[-1]}"
        ecl = f"{every} s" if every else f"not by {cuts[-1]}"
        trail = "; ".join(f"{t}: {v}" + (f" ({','.join(o)})" if o else "") for t, v, o in by)
        print(f"{s:8} {('full speed' if rate == 'full' else rate + ' req/s'):>11} {rps:7.0f} {fcl:>10} {ecl:>10} {cmin:8.0f} s {mm/0.9:6.0f} s ({why:>20})  {trail}")
PY
