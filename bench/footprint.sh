#!/usr/bin/env bash
# bench/footprint.sh: soakd's own memory over a long run, judged by soakd.
#
# Runs `soakd run` and then a `soakd serve` job for SAMPLES samples at
# INTERVAL against a small local C server (testdata/zoo/httpd.c, no leak),
# then analyses soakd's own RSS (samples.csv's self_rss_bytes column) with
# soakd's own verdict (`soakd analyze` on a copy of the file whose rss_bytes
# column is self_rss_bytes) and prints the growth from the end of the
# warm-up to the end of the run. The bar (issue 13): growth <= 1.5 MiB and
# the rss verdict "stable", for both.
#
#   go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/footprint.sh
#   SAMPLES=5000 INTERVAL=20ms MODES=run bash bench/footprint.sh   # a quick look
#
# Not run in CI: it takes SAMPLES x INTERVAL x MARGIN per mode (13 min each by
# default). Loopback only; every process it starts is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."

SAMPLES=${SAMPLES:-30000}
INTERVAL=${INTERVAL:-20ms}
RATE=${RATE:-300}
# CONC bounds the open loop's requests in flight (-c). The load engine adds
# a worker (its connection, buffers and latency histogram) each time a send
# finds none idle, up to 256 by default at this rate: on a busy machine that
# pool fills over the run, which is the engine's memory, not the series'.
# A small bound is reached in the first seconds.
CONC=${CONC:-4}
MODES=${MODES:-"run serve"}
PAGES=${PAGES:-1} # serve: 0 does not look at the live page while the job runs
SOAKD=${SOAKD:-}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [[ -n ${KEEP:-} ]]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

if [[ -z $SOAKD ]]; then
	go build -o "$work/soakd" ./cmd/soakd
	SOAKD=$work/soakd
fi
gcc -O2 -o "$work/httpd" testdata/zoo/httpd.c

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# duration = SAMPLES x INTERVAL x MARGIN, in whole milliseconds: on a busy
# machine a sample takes longer than the interval (the count is printed)
MARGIN=${MARGIN:-1.3}
ms=$(python3 -c "
import re,sys
m=re.fullmatch(r'([0-9.]+)(ms|s)', '$INTERVAL') or sys.exit('INTERVAL: want e.g. 20ms or 1s')
print(int(float(m[1])*(1 if m[2]=='ms' else 1000)*$SAMPLES*$MARGIN))")
dur="${ms}ms"

# the server lives for both modes and their analyses
"$work/httpd" --port-file "$work/port" --leak-bytes 0 --max-lifetime $((ms / 500 + 3600)) >"$work/httpd.log" 2>&1 &
hpid=$!
pids+=("$hpid")
for _ in $(seq 100); do
	[[ -s $work/port ]] && break
	sleep 0.1
done
url="http://$(cat "$work/port")/"

# judge FILE NAME: soakd's verdict on its own RSS, and the growth.
judge() {
	local csv=$1 name=$2 dir="$work/self-$2"
	mkdir -p "$dir"
	# the run's time, phase and requests, and self_rss_bytes as rss_bytes
	awk -F, 'NR==1 { for (i=1;i<=NF;i++) c[$i]=i; print "time,elapsed_seconds,phase,requests,rss_bytes"; next }
		{ print $c["time"] "," $c["elapsed_seconds"] "," $c["phase"] "," $c["requests"] "," $c["self_rss_bytes"] }' \
		"$csv" >"$dir/samples.csv"
	local rows
	rows=$(($(wc -l <"$dir/samples.csv") - 1))
	# growth from the first soak sample (the warm-up's end) to the last sample
	read -r start end peak < <(awk -F, 'NR>1 && $3=="soak" && !s { s=$5 } NR>1 && s { e=$5; if ($5>p) p=$5 } END { print s, e, p }' "$dir/samples.csv")
	# the same with the median of the first and of the last 1000 soak
	# samples: a daemon's RSS swings a few MiB with each page view and GC,
	# and one sample at each end catches a swing
	local medgrowth spread
	read -r medgrowth spread < <(python3 -c '
import csv, statistics, sys
v = [float(r["rss_bytes"]) / 1048576 for r in csv.DictReader(open(sys.argv[1])) if r["phase"] == "soak"]
k = min(1000, len(v) // 2)
print("%.2f" % (statistics.median(v[-k:]) - statistics.median(v[:k])),
      "median=%.1f,sd=%.2f,range=%.1f-%.1f" % (statistics.median(v), statistics.pstdev(v), min(v), max(v)))' "$dir/samples.csv")
	local out verdict
	out=$("$SOAKD" analyze "$dir/samples.csv" || true)
	verdict=$(awk '$1=="rss" { print $2; exit }' <<<"$out")
	local growth
	growth=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b-a)/1048576 }')
	printf '%-6s samples %6d  self RSS at warm-up end %6.1f MiB, at the end %6.1f MiB, peak %6.1f MiB: growth %s MiB; verdict on itself: %s\n' \
		"$name" "$rows" "$(awk -v v="$start" 'BEGIN{print v/1048576}')" "$(awk -v v="$end" 'BEGIN{print v/1048576}')" \
		"$(awk -v v="$peak" 'BEGIN{print v/1048576}')" "$growth" "$verdict"
	echo "       growth between the medians of the first and the last 1000 soak samples: $medgrowth MiB"
	echo "       RSS over the soak, MiB: ${spread//,/, }"
	grep -E '^  rss ' <<<"$out" | sed 's/^/       /'
	if awk -v g="$growth" 'BEGIN { exit !(g <= 1.5) }' && [[ $verdict == stable ]]; then
		echo "       bar (growth <= 1.5 MiB, stable): met"
	else
		echo "       bar (growth <= 1.5 MiB, stable): NOT met"
		fail=1
	fi
}

fail=0
echo "soakd footprint: $SAMPLES samples every $INTERVAL ($dur), open loop at $RATE req/s (at most $CONC in flight), target $url (pid $hpid)"

for mode in $MODES; do
	case $mode in
	run)
		mkdir -p "$work/run"
		"$SOAKD" run -q --rate "$RATE" -c "$CONC" -d "$dur" --interval "$INTERVAL" --pid "$hpid" \
			--out "$work/run" "$url" >"$work/run/stdout" 2>"$work/run/stderr" || true
		[[ -s $work/run/samples.csv ]] || { cat "$work/run/stderr"; exit 2; }
		judge "$work/run/samples.csv" run
		;;
	serve)
		mkdir -p "$work/serve/state"
		api=$(freeport)
		cat >"$work/serve/soakd.yaml" <<EOF
listen: 127.0.0.1:$api
state_dir: $work/serve/state
log_level: warn
jobs:
  - name: footprint
    schedule: "@yearly"
    target:
      pid: $hpid
    load:
      url: $url
      rate: $RATE
      concurrency: $CONC
      duration: $dur
    sampling:
      interval: $INTERVAL
EOF
		"$SOAKD" serve --config "$work/serve/soakd.yaml" >"$work/serve/log" 2>&1 &
		spid=$!
		pids+=("$spid")
		for _ in $(seq 100); do
			curl -fsS "http://127.0.0.1:$api/readyz" >/dev/null 2>&1 && break
			sleep 0.1
		done
		id=$(curl -fsS -X POST "http://127.0.0.1:$api/api/v1/jobs/footprint/runs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
		# look at the live page and API while it runs, as a user would
		deadline=$((SECONDS + ms / 1000 + 600))
		while ((SECONDS < deadline)); do
			status=$(curl -fsS "http://127.0.0.1:$api/api/v1/runs" | python3 -c "import json,sys; print([r['status'] for r in json.load(sys.stdin) if r['id']==$id][0])")
			[[ $status != running ]] && break
			if ((PAGES)); then
				curl -fsS "http://127.0.0.1:$api/runs/$id" >/dev/null || true
				curl -fsS "http://127.0.0.1:$api/" >/dev/null || true
			fi
			sleep 5
		done
		curl -fsS "http://127.0.0.1:$api/api/v1/runs/$id/samples?format=csv" >"$work/serve/samples.csv"
		kill "$spid"
		wait "$spid" || true
		judge "$work/serve/samples.csv" serve
		;;
	*)
		echo "MODES: unknown mode $mode (want run, serve)" >&2
		exit 2
		;;
	esac
done
exit "$fail"
