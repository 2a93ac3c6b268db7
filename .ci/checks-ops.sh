#!/bin/bash
# checks-ops.sh: checks of the operational files: Prometheus rules and
# their unit tests, the Alertmanager example, and the systemd unit
# (verify, and a security exposure score of at most 3.0).
# Needs promtool (Debian prometheus), amtool (prometheus-alertmanager) and
# systemd-analyze; run from anywhere inside the repository.
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"

max_exposure=3.0

step() { printf '\n== %s\n' "$*"; }

step "promtool check rules"
promtool check rules configs/prometheus-rules.yml

step "promtool test rules"
promtool test rules configs/prometheus-rules.test.yml

step "amtool check-config"
amtool check-config configs/alertmanager-example.yml

# verify checks that ExecStart's binary exists and is executable, and
# /usr/local/bin/soakd is not installed on a CI machine: verify a copy
# whose ExecStart points at /bin/true, everything else unchanged.
step "systemd-analyze verify"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's#^ExecStart=/usr/local/bin/soakd #ExecStart=/bin/true #' systemd/soakd.service >"$tmp/soakd.service"
grep -q '^ExecStart=/bin/true serve --config /etc/soakd/soakd.yaml$' "$tmp/soakd.service" || {
	echo "checks-ops: ExecStart of systemd/soakd.service changed; update this script" >&2
	exit 1
}
out=$(systemd-analyze verify "$tmp/soakd.service" 2>&1) || {
	echo "$out" >&2
	exit 1
}
if [ -n "$out" ]; then # verify warns without failing: warnings count here
	echo "$out" >&2
	echo "checks-ops: systemd-analyze verify printed warnings" >&2
	exit 1
fi
echo "ok"

step "systemd-analyze security (exposure <= $max_exposure)"
report=$(systemd-analyze security --offline=yes systemd/soakd.service 2>&1) || true
score=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for soakd.service: \([0-9.]*\).*/\1/p')
if [ -z "$score" ]; then
	printf '%s\n' "$report" >&2
	echo "checks-ops: no exposure score in the report" >&2
	exit 1
fi
echo "exposure: $score"
awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }' || {
	printf '%s\n' "$report" | grep '✗' >&2
	echo "checks-ops: exposure $score > $max_exposure" >&2
	exit 1
}

step "systemd-sysusers --dry-run"
mkdir -p "$tmp/root/etc"
out=$(systemd-sysusers --dry-run --root="$tmp/root" "$PWD/systemd/soakd.sysusers.conf" 2>&1) || {
	echo "$out" >&2
	exit 1
}
grep -q "Creating user 'soakd'" <<<"$out" || {
	echo "$out" >&2
	echo "checks-ops: soakd.sysusers.conf does not create user soakd" >&2
	exit 1
}
echo "ok"

echo
echo "checks-ops: all passed"
