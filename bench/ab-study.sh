#!/usr/bin/env bash
# bench/ab-study.sh: the A/B soak's sequential test by simulation, with
# more seeded runs than CI affords (the tests run 50): false alarms at the
# margins and with A = B, detection of a 120 B/request leak, and the
# requests it took against two separate runs of a fixed length.
#
# Usage: SEEDS=1000 bash bench/ab-study.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SOAKD_AB_SEEDS=${SEEDS:-1000} go test -count=1 -run 'TestSim' -v ./soak/abrun 2>&1 | grep -E 'sim_rates_test|^(--- |ok|FAIL)'
