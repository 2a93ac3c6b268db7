package trend

import (
	"math"
	"testing"
)

// TestSaturation: the fit finds the curve that made a noiseless series,
// an exponential fill or a √-creep, and holds a line whose growth over
// the horizon passes the cap away from it: a straight leak is no curve
// that stops, and fits none well.
func TestSaturation(t *testing.T) {
	x := make([]float64, 60)
	for i := range x {
		x[i] = float64(i) * 1000
	}
	span := x[len(x)-1]
	for _, tt := range []struct {
		name      string
		y         func(float64) float64
		capped    float64
		wantSS    float64 // at most, relative to the series' own spread
		wantTau   float64 // in spans, within 10 %; 0: a power
		wantPower float64
		far       bool // SS at least wantSS: no stopping curve fits
	}{
		{"fill", func(v float64) float64 { return 5 + 3*(1-math.Exp(-v/(0.4*span))) }, 100, 1e-3, 0.4, 0, false},
		{"creep", func(v float64) float64 { return 5 + 3*math.Sqrt(v/span) }, 100, 1e-9, 0, 0.5, false},
		{"line over the cap", func(v float64) float64 { return 5 + 3*v/span }, 3, 1e-3, 0, 0, true},
	} {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = tt.y(v)
		}
		f, ok := Saturation(x, y, 10*span, tt.capped)
		if !ok {
			t.Fatalf("%s: no fit", tt.name)
		}
		ss := f.SS / (variance(y) * float64(len(y)))
		switch {
		case tt.far:
			if ss < tt.wantSS {
				t.Errorf("%s: relative SS %g (τ %g spans, power %g); want ≥ %g", tt.name, ss, f.Tau/span, f.Power, tt.wantSS)
			}
		case ss > tt.wantSS:
			t.Errorf("%s: relative SS %g; want ≤ %g", tt.name, ss, tt.wantSS)
		case tt.wantTau > 0 && math.Abs(f.Tau/span/tt.wantTau-1) > 0.1:
			t.Errorf("%s: τ %g spans; want %g", tt.name, f.Tau/span, tt.wantTau)
		case tt.wantPower > 0 && math.Abs(f.Power-tt.wantPower) > 1e-6:
			t.Errorf("%s: power %g; want %g", tt.name, f.Power, tt.wantPower)
		}
	}
}
