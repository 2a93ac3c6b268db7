#!/usr/bin/env bash
# Where the test suite's time goes: runs go test -race -count=1 -json on the
# packages given (default: the README's order, ./soak/runner/ first, then
# ./...), and prints each package's time and its slowest top-level tests
# (a parallel test's time counts from when it continued, not its pause).
#
#   bash bench/ci-times.sh                      # the whole race step
#   bash bench/ci-times.sh -p 1 ./soak/daemon/  # one package, alone
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
((${#args[@]})) || args=(./soak/runner/ ./soak/daemon/ ./cmd/soakd/ ./soak/verdict/ ./soak/web/ ./...)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "ci-times: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start=$(date +%s)
rc=0
go test -race -count=1 -timeout 25m -json "${args[@]}" >"$out" || rc=$?
echo "ci-times: exit $rc after $(($(date +%s) - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$out" <<'PY'
import json, sys
pkgs, tests = [], []
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("Action") not in ("pass", "fail", "skip") or "Elapsed" not in e:
        continue
    pkg = e["Package"].removeprefix("github.com/soakd/soakd/")
    if "Test" not in e:
        pkgs.append((e["Elapsed"], pkg, e["Action"]))
    elif "/" not in e["Test"]:
        tests.append((e["Elapsed"], pkg, e["Test"], e["Action"]))
for el, pkg, act in sorted(pkgs, reverse=True):
    print(f"{el:8.1f} s  {act:4}  {pkg}")
print("slowest tests:")
for el, pkg, name, act in sorted(tests, reverse=True)[:25]:
    print(f"{el:8.1f} s  {act:4}  {pkg} {name}")
PY
exit $rc
