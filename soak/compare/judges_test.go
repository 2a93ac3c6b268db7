package compare

import (
	"math"
	"testing"
)

// TestJudgeRelativeHigherIsBetter: for throughput a rise is the good
// side. The interval is mirrored whole (each end negated and the ends
// swapped), never crossed, so a throughput well up reads improved, well
// down regressed, and an interval inside the margin same.
func TestJudgeRelativeHigherIsBetter(t *testing.T) {
	for _, c := range []struct {
		ci   [2]float64
		want string
	}{
		{[2]float64{0.25, 0.35}, Improved},
		{[2]float64{-0.35, -0.25}, Regressed},
		{[2]float64{-0.04, 0.05}, Same},
		{[2]float64{-0.30, 0.30}, Inconclusive},
	} {
		m := Metric{CI95: c.ci, Margin: 0.10, Relative: true, HigherIsBetter: true}
		if got, why := judgeRelative(m); got != c.want {
			t.Errorf("throughput interval %v, margin 10 %%: %s (%s), want %s", c.ci, got, why, c.want)
		}
		m.HigherIsBetter = false
		flip := map[string]string{Improved: Regressed, Regressed: Improved, Same: Same, Inconclusive: Inconclusive}
		if got, _ := judgeRelative(m); got != flip[c.want] {
			t.Errorf("latency interval %v, margin 10 %%: %s, want %s", c.ci, got, flip[c.want])
		}
	}
}

// TestErrorDifferenceTakesBothRunsSpread: the error rates' difference is
// as uncertain as both runs together: its interval is at least as wide as
// either run's own, however quiet the other run was.
func TestErrorDifferenceTakesBothRunsSpread(t *testing.T) {
	var bursty, steady []Block
	for i := range 12 {
		e := 0.0
		if i%3 == 0 {
			e = 300 // errors in bursts: overdispersed
		}
		bursty = append(bursty, Block{Seconds: 10, Requests: 10000, Errors: e})
		steady = append(steady, Block{Seconds: 10, Requests: 10000, Errors: 10})
	}
	for _, c := range [][2][]Block{{steady, bursty}, {bursty, steady}} {
		m := compareErrors(c[0], c[1], DefaultMargins(), false)
		half := (m.CI95[1] - m.CI95[0]) / 2
		for _, run := range c {
			_, se := errorRate(run)
			if own := 100 * z95 * se; half < own*(1-1e-9) {
				t.Errorf("the difference's half-width %.4g points is under one run's own %.4g", half, own)
			}
		}
		if _, seo := errorRate(c[0]); math.IsNaN(seo) {
			t.Fatal("no spread")
		}
	}
}
