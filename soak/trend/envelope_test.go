package trend

import (
	"math/rand/v2"
	"testing"
)

// TestBinSpreadUnderDriftingNoise: flat white noise whose SD falls from 4
// to 0.5 (or rises from 0.5 to 4) over the run: the minima of bins climb
// (or fall) with the spread, BinSpread's envelope stays flat, and
// SpreadDrifts sees the drift but not a steady spread.
func TestBinSpreadUnderDriftingNoise(t *testing.T) {
	const n, bins = 1800, 32
	for _, c := range []struct {
		name     string
		from, to float64
		drifts   bool
	}{{"falling", 4, 0.5, true}, {"rising", 0.5, 4, true}, {"steady", 2, 2, false}} {
		rng := rand.New(rand.NewPCG(2, 3))
		x, y := seq(n), make([]float64, n)
		for i := range y {
			y[i] = 100 + (c.from+(c.to-c.from)*float64(i)/n)*rng.NormFloat64()
		}
		if got := SpreadDrifts(y, bins); got != c.drifts {
			t.Errorf("%s: SpreadDrifts = %v; want %v", c.name, got, c.drifts)
		}
		env := BinSpread(x, y, bins, 0.1)
		mins := BinEqual(x, y, bins, ByMin)
		se, sm := TheilSen(env.X, env.Y), TheilSen(mins.X, mins.Y)
		// Over the run the envelope may move by a small share of the
		// noise; the minima move by about 2.3 × the change in SD.
		if d := se.Slope * n; d < -0.5 || d > 0.5 {
			t.Errorf("%s: BinSpread's envelope moves %.2f over the run; want within ±0.5", c.name, d)
		}
		if c.drifts {
			if d := sm.Slope * n; c.to < c.from && d < 3 || c.to > c.from && d > -3 {
				t.Errorf("%s: the minima move %.2f over the run; want more than 3 with the spread (the bias BinSpread removes)", c.name, d)
			}
		}
	}
}
