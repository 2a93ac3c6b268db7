package compare_test

import (
	"os"
	"strconv"
	"testing"
)

// pairs is how many pairs of runs the study draws per noise model: 20,
// or SOAKD_COMPARE_PAIRS (bench/compare-study.sh runs 200).
func pairs() int {
	if n, err := strconv.Atoi(os.Getenv("SOAKD_COMPARE_PAIRS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 10
	}
	return 20
}
