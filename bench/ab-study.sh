#!/usr/bin/env bash
# The study of soakd ab.
#
#   SEEDS=1000 bash bench/ab-study.sh [sim]
#     The sequential test by simulation, with more seeded runs than CI
#     affords (the tests run 50): false alarms at the margins and with
#     A = B, detection of a 120 B/request leak, and the requests it took
#     against two separate runs of a fixed length.
#
#   SOAKD=/tmp/soakd bash bench/ab-study.sh real
#     On a real server (testdata/target, clean):
#      1. RUNS (default 10) soakd ab runs of identical builds, default
#         bounds (-n 400000, -c 4): one line each with the verdict, the
#         exit code, each metric's paired difference and verdict, the
#         builds' contention (seconds waited for a core per CPU second) and
#         the load average at the start; then the verdicts counted.
#      2. The CPU cost: REPS (3) times, soakd ab of a build burning CPUA
#         (100us) a request against one burning CPUB (130us), then two
#         sequential soakd runs of the same builds (closed loop -c 4, SEQ
#         30s each) compared by soakd compare; each CPU-per-request
#         difference, and the ab one's share off the sequential one's.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-sim} != real ]]; then
	SOAKD_AB_SEEDS=${SEEDS:-1000} go test -count=1 -run 'TestSim' -v ./soak/abrun 2>&1 | grep -E 'sim_rates_test|^(--- |ok|FAIL)'
	exit
fi
SOAKD=${SOAKD:?build soakd and set SOAKD}
RUNS=${RUNS:-10} REPS=${REPS:-3} CPUA=${CPUA:-100us} CPUB=${CPUB:-130us} SEQ=${SEQ:-30s} C=${C:-4}
STEPS=${STEPS:-"same cpu"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/target" ./testdata/target
tgt="$work/target --listen 127.0.0.1:{port} --max-lifetime 15m"
row='def m($k): .metrics[$k] as $m | if $m == null then "–"
	elif $m.relative then "\($m.verdict[0:4]) \(if $m.difference == null then "–" else ($m.difference*1000|round/10|tostring) + "%" end)"
	else "\($m.verdict[0:4]) \(if $m.difference == null then "–" else ($m.difference*10|round/10|tostring) end)" end;
	"\(.verdict) | \(m("latency_p50")) | \(m("latency_p99")) | \(m("latency_p999")) | \(m("cpu_per_request")) | \(m("throughput")) | \(m("error_rate")) | \(m("rss_per_request")) | \(m("fds_per_request")) | \(if .contention then (.contention|map(.*100|round/100|tostring)|join(" / ")) else "–" end) | \(.requests) in \(.seconds|floor) s, \(.stopped_by)"'
if [[ $STEPS == *same* ]]; then
	echo "## soakd ab, identical builds: $RUNS runs (-c $C, default bounds)"
	echo "| run | load avg | verdict | exit | p50 | p99 | p99.9 | CPU/req | throughput | errors | rss B/req | fds | contention A / B | took |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	declare -A count
	for i in $(seq "$RUNS"); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		rc=0
		timeout 12m "$SOAKD" ab -q --json -c "$C" --a "$tgt" --b "$tgt" >"$work/ab.json" 2>/dev/null || rc=$?
		v=$(jq -r .verdict "$work/ab.json")
		count[$v]=$((${count[$v]:-0} + 1))
		echo "| $i | $load | $(jq -r "$row" "$work/ab.json" | sed "s/^\([a-z]*\) |/\1 | $rc |/") |"
	done
	echo
	printf 'runs:'
	for v in "${!count[@]}"; do printf ' %s %d' "$v" "${count[$v]}"; done
	echo
fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
soak() { # soak DIR CPU: one closed-loop soak of a build burning CPU a request
	local p
	p=$(port)
	timeout 10m "$SOAKD" run -q -d "$SEQ" -c "$C" --out "$1" \
		--exec "$work/target --listen 127.0.0.1:$p --max-lifetime 10m --cpu-per-request $2" "http://127.0.0.1:$p/" >/dev/null 2>&1 || true
}
if [[ $STEPS == *cpu* ]]; then
	echo "## CPU per request, $CPUA against $CPUB: soakd ab against two sequential soaks ($SEQ each, -c $C)"
	echo "| rep | ab: CPU/req A, B | ab: B vs A (paired) | ab verdict | sequential: old, new | sequential: difference | compare verdict | ab off sequential |"
	echo "|---|---|---|---|---|---|---|---|"
	for i in $(seq "$REPS"); do
		timeout 12m "$SOAKD" ab -q --json -c "$C" --a "${tgt} --cpu-per-request $CPUA" --b "${tgt} --cpu-per-request $CPUB" >"$work/ab.json" 2>/dev/null || true
		rm -rf "$work/a" "$work/b"
		soak "$work/a" "$CPUA"
		soak "$work/b" "$CPUB"
		"$SOAKD" compare --json "$work/a" "$work/b" >"$work/cmp.json" 2>/dev/null || true
		jq -rs --arg i "$i" '(.[0].metrics.cpu_per_request) as $a | (.[1].metrics.cpu_per_request) as $s
			| def us: .*1e7|round/10; def pc: .*1000|round/10;
			"| \($i) | \($a.old|us), \($a.new|us) µs | \($a.difference|pc) % (\($a.ci95[0]|pc) … \($a.ci95[1]|pc)) | \($a.verdict) | \($s.old|us), \($s.new|us) µs | \($s.difference|pc) % (\($s.ci95[0]|pc) … \($s.ci95[1]|pc)) | \($s.verdict) | \((($a.difference/$s.difference)-1)|pc) % |"' \
			"$work/ab.json" "$work/cmp.json"
	done
fi
