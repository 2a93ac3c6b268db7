#!/usr/bin/env bash
# The study of soakd compare.
#
#   bash bench/compare-study.sh [sim]
#     The simulation (soak/compare/sim_test.go) with more pairs per noise
#     model (PAIRS, default 200) and the rows the tests only report (a leak
#     at the margin, latency +15 %, p99 +30 %): each row's verdict counts.
#
#   SOAKD=/tmp/soakd bash bench/compare-study.sh real
#   KEEP=DIR SOAKD=/tmp/soakd bash bench/compare-study.sh real
#   SOAKD=/tmp/soakd bash bench/compare-study.sh pairs DIR
#     With KEEP, each soak's run directory is kept as DIR/runN. "pairs DIR"
#     compares every pair of the runs kept in DIR (any build's soakd can
#     re-read them) and counts each metric's verdicts, with the rms of the
#     pairs' log differences against the rms of their intervals' half
#     widths over 1.96 (the interval's width against the real spread).
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
if [[ ${1:-sim} != real && ${1:-sim} != pairs ]]; then
	SOAKD_COMPARE_PAIRS=${PAIRS:-200} go test ./soak/compare -run 'TestStudy' -count=1 -v -timeout 30m |
		grep -E '^\s*(--- |ok|FAIL)|sim_test.go'
	exit
fi
SOAKD=${SOAKD:?build soakd and set SOAKD}
if [[ $1 == pairs ]]; then
	python3 - "$SOAKD" "${2:?pairs DIR: the runs kept by KEEP=DIR}" <<'PY'
import itertools, json, math, os, subprocess, sys
soakd, root = sys.argv[1:]
runs = sorted((d for d in os.listdir(root) if d.startswith("run") and os.path.exists(f"{root}/{d}/report.json")), key=lambda d: int(d[3:]))
overall, per = {}, {}
for a, b in itertools.combinations(runs, 2):
    out = subprocess.run([soakd, "compare", "--json", f"{root}/{a}", f"{root}/{b}"], capture_output=True, text=True).stdout
    j = json.loads(out)
    overall[j["verdict"]] = overall.get(j["verdict"], 0) + 1
    for name, m in j["metrics"].items():
        p = per.setdefault(name, {"verdicts": {}, "d2": [], "w2": []})
        p["verdicts"][m["verdict"]] = p["verdicts"].get(m["verdict"], 0) + 1
        if m.get("relative") and m.get("difference") is not None and m["ci95"][0] is not None:
            p["d2"].append(math.log1p(m["difference"]) ** 2)
            p["w2"].append(((math.log1p(m["ci95"][1]) - math.log1p(m["ci95"][0])) / 2 / 1.96) ** 2)
print(f"{len(runs)} runs, {sum(overall.values())} pairs; overall {overall}")
for name in sorted(per):
    p = per[name]
    spread = f"  rms d {math.sqrt(sum(p['d2'])/len(p['d2'])):.3f} rms w {math.sqrt(sum(p['w2'])/len(p['w2'])):.3f}" if p["d2"] else ""
    print(f"{name:22} {p['verdicts']}{spread}")
PY
	exit
fi
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
	if [[ -n ${KEEP:-} ]]; then
		mkdir -p "$KEEP"
		cp -r "$work/a" "$KEEP/run$((2 * i - 1))"
		cp -r "$work/b" "$KEEP/run$((2 * i))"
	fi
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
