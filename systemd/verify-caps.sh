#!/bin/bash
# verify-caps.sh: show which /proc/PID files of another user's process an
# unprivileged user can read with which capabilities. Run as root; it
# starts one `sleep` as nobody and kills it by PID at the end.
set -euo pipefail
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300 &
target=$!
trap 'kill "$target" 2>/dev/null || true' EXIT
sleep 0.2

try() { # try CAPS COMMAND: run COMMAND as uid 4242 with only CAPS
	local caps=$1
	shift
	if setpriv --reuid=4242 --regid=4242 --clear-groups \
		--inh-caps="-all${caps:+,$caps}" --ambient-caps="-all${caps:+,$caps}" \
		--bounding-set="-all${caps:+,$caps}" sh -c "$*" >/dev/null 2>&1; then
		echo ok
	else
		echo denied
	fi
}

for caps in "" "+sys_ptrace" "+dac_read_search" "+sys_ptrace,+dac_read_search"; do
	echo "== capabilities: ${caps:-none}"
	for f in stat status limits io smaps_rollup; do
		printf '%-14s %s\n' "$f" "$(try "$caps" "cat /proc/$target/$f")"
	done
	printf '%-14s %s\n' "fd (list)" "$(try "$caps" "ls /proc/$target/fd")"
	printf '%-14s %s\n' "fd (readlink)" "$(try "$caps" "readlink /proc/$target/fd/0")"
done
