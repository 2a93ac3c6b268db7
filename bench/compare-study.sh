#!/usr/bin/env bash
# The study of soakd compare.
#
#   bash bench/compare-study.sh [sim]
#     The simulation (soak/compare/sim_test.go) with more pairs per noise
#     model (PAIRS, default 200) and the rows the tests only report (a leak
#     at the margin, latency +15 %, p99 +30 %): each row's verdict counts.
#
#   SOAKD=/tmp/soakd bash bench/compare-study.sh real
#     Same-build pairs on a real server: PAIRS (default 10) pairs of two
#     sequential soaks of testdata/target (clean), each DUR (60s) long, in
#     open loop at RATE (500) req/s with up to C (4) in flight; each pair is
#     compared (soakd compare --json OLD NEW), and so is each soak with
#     itself. One line per pair: the verdict, the exit code, each block
#     metric's difference and verdict, rss's, the runs' contention (seconds
#     waited for a core per CPU second) and the load average at the start;
#     then the verdicts counted.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-sim} != real ]]; then
	SOAKD_COMPARE_PAIRS=${PAIRS:-200} go test ./soak/compare -run 'TestStudy' -count=1 -v -timeout 30m |
		grep -E '^\s*(--- |ok|FAIL)|sim_test.go'
	exit
fi
SOAKD=${SOAKD:?build soakd and set SOAKD}
PAIRS=${PAIRS:-10} DUR=${DUR:-60s} RATE=${RATE:-500} C=${C:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/target" ./testdata/target
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
soak() { # soak DIR: one soak of the clean target
	local p
	p=$(port)
	timeout 10m "$SOAKD" run -q -d "$DUR" --rate "$RATE" -c "$C" --out "$1" \
		--exec "$work/target --listen 127.0.0.1:$p --max-lifetime 10m" "http://127.0.0.1:$p/" >/dev/null 2>&1 || true
}
row='def m($k): .metrics[$k] as $m | if $m == null then "–"
	elif $m.relative then "\($m.verdict[0:4]) \(if $m.difference == null then "–" else ($m.difference*1000|round/10|tostring) + "%" end)"
	else "\($m.verdict[0:4]) \(if $m.difference == null then "–" else ($m.difference*10|round/10|tostring) end)" end;
	"\(.verdict) | \(m("latency_p50")) | \(m("latency_p99")) | \(m("latency_p999")) | \(m("cpu_per_request")) | \(m("throughput")) | \(m("error_rate")) | \(m("rss_per_request")) | \(if .contention then (.contention|map(.*100|round/100|tostring)|join(" / ")) else "–" end)"'
echo "## soakd compare, the same build twice: $PAIRS pairs of $DUR soaks at $RATE req/s (-c $C)"
echo "| pair | load avg | verdict | exit | p50 | p99 | p99.9 | CPU/req | throughput | errors | rss B/req | contention old / new | self |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
declare -A count self
for i in $(seq "$PAIRS"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	rm -rf "$work/a" "$work/b"
	soak "$work/a"
	soak "$work/b"
	rc=0
	"$SOAKD" compare --json "$work/a" "$work/b" >"$work/cmp.json" 2>/dev/null || rc=$?
	src=0
	"$SOAKD" compare --json "$work/a" "$work/a" >"$work/self.json" 2>/dev/null || src=$?
	v=$(jq -r .verdict "$work/cmp.json")
	sv=$(jq -r .verdict "$work/self.json")
	count[$v]=$((${count[$v]:-0} + 1))
	self[$sv]=$((${self[$sv]:-0} + 1))
	echo "| $i | $load | $(jq -r "$row" "$work/cmp.json" | sed "s/^\([a-z]*\) |/\1 | $rc |/") | $sv ($src) |"
done
echo
printf 'pairs:'
for v in "${!count[@]}"; do printf ' %s %d' "$v" "${count[$v]}"; done
printf '\nself:'
for v in "${!self[@]}"; do printf ' %s %d' "$v" "${self[$v]}"; done
echo
