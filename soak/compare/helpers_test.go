package compare_test

import (
	"os"
	"strconv"
	"testing"
)

// pairs is how many pairs of runs the study draws per noise model: 20 (4
// under the race detector, which makes the fits about ten times slower),
// or SOAKD_COMPARE_PAIRS (bench/compare-study.sh runs 100 or more).
func pairs() int {
	if n, err := strconv.Atoi(os.Getenv("SOAKD_COMPARE_PAIRS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() || raceBuild {
		return 4
	}
	return 20
}
