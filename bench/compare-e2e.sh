#!/usr/bin/env bash
# soakd compare end to end against real processes (cmd/soakd's
# TestCompareE2E): the same clean testdata/target twice, a build leaking
# 120 B a request, and one burning 30 % more CPU per request, each soaked
# for up to 6 s (60 000 requests); prints each comparison's line.
#
#   bash bench/compare-e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD_E2E_COMPARE=1 go test ./cmd/soakd -run 'TestCompareE2E' -count=1 -v -timeout 10m |
  grep -E '^\s*(--- |ok|FAIL)|compare_e2e_test.go'
