#!/usr/bin/env bash
# The simulation study of soakd compare (soak/compare/sim_test.go) with
# more pairs per noise model (PAIRS, default 200) and the rows the tests
# only report (a leak at the margin, latency +15 and +20 %): prints each
# row's verdict counts.
#
#   bash bench/compare-study.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD_COMPARE_PAIRS=${PAIRS:-200} go test ./soak/compare -run 'TestStudy' -count=1 -v -timeout 30m |
  grep -E '^\s*(--- |ok|FAIL)|sim_test.go'
