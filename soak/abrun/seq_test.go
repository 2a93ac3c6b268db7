package abrun

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHalfWidthHoldsAtEveryLook: a mean of Gaussian pairs whose truth is
// exactly the margin, looked at every 2 pairs from 4 to 40 with the
// spread estimated: the running lower bound crosses the truth in at most
// alpha/2 = 1 % of 4000 seeded runs, for small and large spreads.
func TestHalfWidthHoldsAtEveryLook(t *testing.T) {
	const runs, alpha = 4000, 0.02
	m := math.Log(1.05)
	for _, sd := range []float64{0.02, 0.05, 0.1, 0.3} {
		cross := 0
		for s := range uint64(runs) {
			r := rand.New(rand.NewPCG(s, 1))
			var xs []float64
			lo := math.Inf(-1)
			for n := 1; n <= 40; n++ {
				xs = append(xs, m+sd*r.NormFloat64())
				if n < 4 || n%2 != 0 {
					continue
				}
				mu, se, nu := meanSE(xs)
				if lo = math.Max(lo, mu-HalfWidth(se, m, alpha, nu)); lo > m {
					cross++
					break
				}
			}
		}
		if rate := float64(cross) / runs; rate > alpha/2 {
			t.Errorf("sd %.2f: the bound crossed the truth in %.2f %% of runs; want <= %.1f %%", sd, 100*rate, 100*alpha/2)
		}
	}
}

func TestHalfWidthEdges(t *testing.T) {
	for _, c := range []struct {
		se, tau, alpha, nu float64
		want               float64
	}{
		{0, 1, 0.02, 0, 0},
		{math.Inf(1), 1, 0.02, 0, math.Inf(1)},
		{math.NaN(), 1, 0.02, 0, math.Inf(1)},
		{1, 0, 0.02, 0, math.Inf(1)},
		{1, 1, 0, 0, math.Inf(1)},
	} {
		if got := HalfWidth(c.se, c.tau, c.alpha, c.nu); got != c.want {
			t.Errorf("HalfWidth(%v, %v, %v, %v) = %v; want %v", c.se, c.tau, c.alpha, c.nu, got, c.want)
		}
	}
	// Wider than a fixed 95 % interval, and wider with fewer pairs.
	if w := HalfWidth(1, 1, 0.05, 0); w <= 1.96 {
		t.Errorf("HalfWidth(1, 1, 0.05) = %v; want > 1.96", w)
	}
	if a, b := HalfWidth(1, 1, 0.05, 3), HalfWidth(1, 1, 0.05, 30); a <= b {
		t.Errorf("HalfWidth at 3 df = %v, at 30 df = %v; want the first wider", a, b)
	}
}
