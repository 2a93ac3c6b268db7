#!/usr/bin/env bash
# bench/fuzz.sh: run native Go fuzz targets one at a time, each for
# FUZZTIME (default 10m) with one worker, and print a table: package,
# target, fuzzing time, executions, new interesting inputs, crasher.
# Not in CI: the seed corpora run in plain `go test`.
#
#   FUZZTIME=10m bash bench/fuzz.sh                        # every target
#   FUZZTIME=1m bash bench/fuzz.sh ./probes:FuzzParseStat  # some
#
# Logs go to $FUZZLOG (default /tmp/fuzz/NAME.log). A crasher is written
# by go test to the package's testdata/fuzz/NAME/; commit it with the fix
# as a regression seed. Exits 1 when any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10m}
logs=${FUZZLOG:-/tmp/fuzz}
mkdir -p "$logs"

# every_target prints PKG:NAME for each func FuzzX in the module.
every_target() {
  grep -rH --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . |
    sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz.*)$|\1:\2|' | sort -u
}

targets=("$@")
if ((${#targets[@]} == 0)); then
  mapfile -t targets < <(every_target)
fi

failed=0
printf '%-18s %-26s %9s %12s %6s  %s\n' package target fuzzed execs new crasher
for t in "${targets[@]}"; do
  pkg=${t%%:*} name=${t##*:}
  log="$logs/$name.log"
  go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel 1 >"$log" 2>&1 || failed=1
  last=$(grep -E 'elapsed: .*execs: [0-9]+' "$log" | tail -n 1 || true)
  elapsed=$(sed -nE 's/.*elapsed: ([0-9hms.]+),.*/\1/p' <<<"$last")
  execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
  new=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
  crasher=$(grep -oE 'testdata/fuzz/[^ ]+' "$log" | head -n 1 || true)
  if [[ -z $crasher ]] && grep -q '^FAIL' "$log"; then crasher="FAIL (see $log)"; fi
  printf '%-18s %-26s %9s %12s %6s  %s\n' "$pkg" "$name" "${elapsed:-?}" "${execs:-?}" "${new:-?}" "${crasher:-none}"
done
exit "$failed"
