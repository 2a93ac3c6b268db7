#!/usr/bin/env bash
# bench/load.sh: the whole `soakd run` against wrk and ab (and hey) on one nginx.
#
# Run by hand as root (not in CI), from anywhere:   bash bench/load.sh
#
# It starts Debian's nginx (package nginx-light) on 127.0.0.1 at a free port
# with its own config in a temp dir, serving a 512-byte file, and stops it
# by PID on exit. Each client runs for DUR seconds (default 8) at c=1 and
# c=50 with keep-alive, then c=1 and c=10 without (wrk has no such mode).
# For every run it records throughput, client user+sys CPU seconds and peak
# RSS from /usr/bin/time, and requests per client CPU-second.
#
# soakd: runs the whole product, sampling and verdicts included:
#     $SOAKD run -q -c N -d 8s [--keepalive=false] URL
# and reads the load report (Summary.WriteText) on stdout. SOAKD defaults
# to a fresh build of ./cmd/soakd; SOAKD=engine builds bench/loadclient,
# which drives soak/load alone with the same flags.
#
# At the end it prints the issue-13 bars (requests per client CPU-second
# >= 1.0x wrk at c=1 and c=50 with keep-alive, >= 0.9x ab without, and
# throughput >= 1.0x wrk at c=1), one line per round.
#
# Environment: SOAKD, DUR (seconds, default 8), NGINX (default
# /usr/sbin/nginx), ROUNDS (default 1; repeat the whole set on a noisy
# machine and compare rounds), HEY=1 to add hey (installed with go install
# into a temp GOBIN when it is not on PATH).
set -euo pipefail

DUR=${DUR:-8}
ROUNDS=${ROUNDS:-1}
NGINX=${NGINX:-/usr/sbin/nginx}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/soakd-bench.XXXXXX)
chmod 755 "$WORK"
NGINX_PID=

cleanup() {
	if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
		kill "$NGINX_PID"
		# give it 5 s to exit (a zombie counts as exited), then KILL; reap it
		for _ in $(seq 50); do
			[[ $(awk '{print $3}' "/proc/$NGINX_PID/stat" 2>/dev/null) =~ ^(Z|)$ ]] && break
			sleep 0.1
		done
		kill -KILL "$NGINX_PID" 2>/dev/null || true
		wait "$NGINX_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start_nginx() {
	local port=$1
	mkdir -p "$WORK/www" "$WORK/tmp"
	chmod 755 "$WORK/www"
	head -c 512 /dev/zero | tr '\0' 'x' >"$WORK/www/index.html"
	chmod 644 "$WORK/www/index.html"
	cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp;
  fastcgi_temp_path $WORK/tmp; uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
  keepalive_requests 100000000;
  server { listen 127.0.0.1:$port; root $WORK/www; }
}
EOF
	"$NGINX" -c "$WORK/nginx.conf" -p "$WORK" >"$WORK/nginx.out" 2>&1 &
	NGINX_PID=$!
	for _ in $(seq 50); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/index.html" && return 0
		sleep 0.1
	done
	echo "nginx did not come up; see $WORK/error.log" >&2
	cat "$WORK/error.log" >&2 || true
	exit 1
}

find_hey() {
	if command -v hey >/dev/null; then command -v hey; return; fi
	if GOBIN="$WORK/gobin" go install github.com/rakyll/hey@latest >/dev/null 2>&1; then
		echo "$WORK/gobin/hey"
	fi
}

build_soakd() {
	case ${SOAKD:-} in
	"")
		(cd "$ROOT" && go build -o "$WORK/soakd" ./cmd/soakd)
		echo "$WORK/soakd" ;;
	engine)
		(cd "$ROOT" && go build -o "$WORK/loadclient" ./bench/loadclient)
		echo "$WORK/loadclient" ;;
	*) echo "$SOAKD" ;;
	esac
}

# timed NAME CMD...: runs CMD under /usr/bin/time; output in $WORK/NAME.{out,time}
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>&1 || true
}

# parse TOOL NAME: prints "requests rps errors"
parse() {
	local tool=$1 f="$WORK/$2.out"
	case $tool in
	soakd | ab) awk '/^Complete requests:/{n=$3} /^Requests per second:/{r=$4} /^Failed requests:/{e=$3} /^Non-2xx responses:/{e+=$3} END{print n+0, r+0, e+0}' "$f" ;;
	wrk) awk '/requests in/{n=$1} /^Requests\/sec:/{r=$2} /Socket errors:/{gsub(/,/, ""); e=$4+$6+$8+$10} /Non-2xx/{e+=$NF} END{print n+0, r+0, e+0}' "$f" ;;
	hey) awk '/^  Total:/{t=$2} /^  Requests\/sec:/{r=$2} END{printf "%d %s 0\n", t*r, r+0}' "$f" ;;
	esac
}

# run_one TOOL C KA: runs one client, appends a row to $WORK/rows
run_one() {
	local tool=$1 c=$2 ka=$3 url=$URL name="$1-c$2-ka$3"
	case $tool in
	soakd)
		local kaflag=()
		[[ $ka == off ]] && kaflag=(--keepalive=false)
		timed "$name" "$SOAKD_BIN" run -q -c "$c" -d "${DUR}s" "${kaflag[@]}" "$url" ;;
	wrk) timed "$name" wrk -t1 -c "$c" -d "${DUR}s" "$url" ;;
	ab)
		local kflag=()
		[[ $ka == on ]] && kflag=(-k)
		timed "$name" ab -q "${kflag[@]}" -c "$c" -t "$DUR" -n 100000000 "$url" ;;
	hey)
		local dflag=()
		[[ $ka == off ]] && dflag=(-disable-keepalive)
		timed "$name" "$HEY" -z "${DUR}s" -c "$c" "${dflag[@]}" "$url" ;;
	esac
	read -r n rps errs < <(parse "$tool" "$name")
	read -r u s rss <"$WORK/$name.time"
	awk -v t="$tool" -v c="$c" -v ka="$ka" -v n="$n" -v r="$rps" -v u="$u" -v s="$s" -v m="$rss" -v e="$errs" 'BEGIN{
		cpu = u + s; eff = (cpu > 0) ? n / cpu : 0
		printf "%s %s %s %d %.0f %.2f %.0f %.1f %d\n", t, c, ka, n, r, cpu, eff, m / 1024, e }' >>"$WORK/rows"
	if [[ $errs != 0 ]]; then
		echo "note: $tool c=$c keep-alive=$ka reported $errs failed requests:" >&2
		tail -n 40 "$WORK/$name.out" >&2
	fi
	echo "$ROUND" >>"$WORK/round"
}

print_table() {
	printf '| client | c | keep-alive | requests | failed | req/s | CPU s (user+sys) | req per CPU-s | peak RSS MiB |\n'
	printf '|---|---|---|---|---|---|---|---|---|\n'
	awk '{printf "| %s | %s | %s | %d | %d | %d | %.2f | %d | %.1f |\n", $1,$2,$3,$4,$9,$5,$6,$7,$8}' "$WORK/rows"
	printf '\nRatios (soakd / other, rounds pooled): throughput, requests per CPU-second\n\n'
	printf '| c | keep-alive | vs | throughput | efficiency |\n|---|---|---|---|---|\n'
	awk '{k=$2" "$3; rps[$1" "k]+=$5; eff[$1" "k]+=$7; keys[k]=1}
	END{split("wrk ab hey", os, " ")
		for (k in keys) for (i = 1; i <= 3; i++) { o = os[i]
			if ((o" "k) in rps && ("soakd "k) in rps && rps[o" "k] > 0 && eff[o" "k] > 0) {
				split(k, p, " ")
				printf "| %s | %s | %s | %.2f | %.2f |\n", p[1], p[2], o, rps["soakd "k]/rps[o" "k], eff["soakd "k]/eff[o" "k] } } }' "$WORK/rows" | sort -t'|' -k3,3r -k2,2n -k4,4
}

# print_bars: the issue-13 bars, one line per round.
print_bars() {
	printf '\nBars per round (soakd / other; pass when >= the bar)\n\n'
	paste -d' ' "$WORK/round" "$WORK/rows" | awk '
	{ k=$1" "$2" "$3" "$4; rps[k]=$6; eff[k]=$8; if ($1 > nr) nr = $1 }
	function bar(r, label, a, b, v, min,   x) {
		if (!(a in v) || !(b in v) || v[b] <= 0) { printf "  %-44s  n/a\n", label; return }
		x = v[a] / v[b]
		printf "  %-44s %5.2f  (bar %.1f: %s)\n", label, x, min, (x >= min) ? "met" : sprintf("missed by %.0f %%", (min - x) / min * 100)
	}
	END { for (r = 1; r <= nr; r++) {
		printf "round %d\n", r
		bar(r, "req/CPU-s vs wrk, c=1 keep-alive", r" soakd 1 on", r" wrk 1 on", eff, 1.0)
		bar(r, "req/CPU-s vs wrk, c=50 keep-alive", r" soakd 50 on", r" wrk 50 on", eff, 1.0)
		bar(r, "req/CPU-s vs ab, c=1 no keep-alive", r" soakd 1 off", r" ab 1 off", eff, 0.9)
		bar(r, "req/CPU-s vs ab, c=10 no keep-alive", r" soakd 10 off", r" ab 10 off", eff, 0.9)
		bar(r, "throughput vs wrk, c=1 keep-alive", r" soakd 1 on", r" wrk 1 on", rps, 1.0)
	} }'
}

main() {
	[[ $(id -u) == 0 ]] || echo "note: not root; nginx may fail to start" >&2
	local port
	port=$(free_port)
	start_nginx "$port"
	URL="http://127.0.0.1:$port/index.html"
	SOAKD_BIN=$(build_soakd)
	local tools=(soakd wrk ab)
	if [[ ${HEY:-} == 1 ]]; then
		HEY=$(find_hey || true)
		[[ -n $HEY ]] && tools+=(hey) || echo "note: hey not found and go install failed: skipping hey" >&2
	fi
	echo "nginx pid $NGINX_PID at $URL; ${DUR}s per run; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	for ROUND in $(seq "$ROUNDS"); do
		for spec in "1 on" "50 on" "1 off" "10 off"; do
			read -r c ka <<<"$spec"
			for tool in "${tools[@]}"; do
				[[ $tool == wrk && $ka == off ]] && continue
				echo "running $tool c=$c keep-alive=$ka" >&2
				run_one "$tool" "$c" "$ka"
			done
		done
	done
	print_table
	print_bars
}

main "$@"
