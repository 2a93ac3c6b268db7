#!/usr/bin/env bash
# bench/ab-e2e.sh: the interleaved A/B soak against two separate runs, on
# real processes (two testdata/target servers on loopback).
#
#  1. `soakd ab`, clean against --leak-bytes 120, REPS times: the verdict
#     and the requests it took to decide.
#  2. Two separate `soakd run`s of N requests each (clean, then leaky), for
#     N in SEPARATE, REPS times each, judged by `soakd compare` when the
#     build has it, else by the same rule on the two reports' rss slopes
#     (difference ± 1.96·√(seA² + seB²) against max(16 B, 25 % of A's)).
#  3. `soakd ab`, clean twice, with a bound long enough to decide rss.
#
# Usage: go build -o /tmp/soakd ./cmd/soakd && SOAKD=/tmp/soakd bash bench/ab-e2e.sh
set -euo pipefail
SOAKD=${SOAKD:?build soakd and set SOAKD}
REPS=${REPS:-5}
SEPARATE=${SEPARATE:-"8000 16000 24000 32000 48000"}
C=${C:-4}
STEPS=${STEPS:-"ab separate clean"} # which of the three parts to run
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/target" github.com/soakd/soakd/testdata/target
tgt="$work/target --listen 127.0.0.1:{port}"

echo "## soakd ab, clean vs leak 120 B/request (-c $C)"
[[ $STEPS == *ab* ]] && for i in $(seq "$REPS"); do
	rc=0
	"$SOAKD" ab -q -c "$C" --json --a "$tgt" --b "$tgt --leak-bytes 120" >"$work/ab.json" 2>/dev/null || rc=$?
	jq -r --arg rc "$rc" --arg i "$i" '"rep \($i): exit \($rc) \(.verdict), rss \(.metrics.rss_per_request.verdict), \(.requests) requests (\(.pairs) pairs), \(.seconds|floor) s"' "$work/ab.json"
done

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
one() { # one run of N requests: one N LEAK DIR
	local p; p=$(port)
	"$SOAKD" run -q -c "$C" -n "$1" --out "$3" --exec "$work/target --listen 127.0.0.1:$p --leak-bytes $2" "http://127.0.0.1:$p/" >/dev/null 2>&1 || true
}
judge() { # judge DIR_A DIR_B: the rss verdict of B against A
	if "$SOAKD" compare --help >/dev/null 2>&1; then
		{ "$SOAKD" compare --json "$1" "$2" 2>/dev/null || true; } | jq -r '.metrics.rss_per_request.verdict // "?"'
		return
	fi
	jq -rs '(.[0].resources.rss) as $a | (.[1].resources.rss) as $b
		| (($a.ci95[1]-$a.ci95[0])/3.92) as $sa | (($b.ci95[1]-$b.ci95[0])/3.92) as $sb
		| ($b.per_request-$a.per_request) as $d | (1.96*(($sa*$sa+$sb*$sb)|sqrt)) as $h
		| ([16, 0.25*([$a.per_request,0]|max)]|max) as $m
		| if $d-$h > $m then "regressed" elif $d-$h > -$m and $d+$h < $m then "same" else "inconclusive" end' \
		"$1/report.json" "$2/report.json"
}
echo "## two separate soakd runs, clean then leak 120 B/request (-c $C)"
[[ $STEPS == *separate* ]] && for n in $SEPARATE; do
	line="N=$n each ($((2 * n)) in all), rss verdicts:"
	for i in $(seq "$REPS"); do
		rm -rf "$work/a" "$work/b"
		one "$n" 0 "$work/a"
		one "$n" 120 "$work/b"
		line="$line $(judge "$work/a" "$work/b")"
	done
	echo "$line"
done

echo "## soakd ab, clean twice (-c $C, -n ${CLEAN_N:=600000})"
[[ $STEPS == *clean* ]] && for i in $(seq "$REPS"); do
	rc=0
	"$SOAKD" ab -q -c "$C" -n "$CLEAN_N" --json --a "$tgt" --b "$tgt" >"$work/ab.json" 2>/dev/null || rc=$?
	jq -r --arg rc "$rc" '"exit \($rc) \(.verdict), rss \(.metrics.rss_per_request.verdict) [\(.metrics.rss_per_request.ci95|map(.*10|round/10)|join(", "))], undecided: \([.metrics|to_entries[]|select(.value.verdict=="inconclusive")|.key]|join(" ")), \(.requests) requests, \(.seconds|floor) s"' "$work/ab.json"
done
