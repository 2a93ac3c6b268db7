package verdict

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/trend"
)

// TestSlopePAgreesWithItsInterval: the slope test's p is under 0.025
// exactly when the 95 % interval beside it lies above 0, however
// lopsided the interval is about the slope (issue 41: "p = 6.0e-4" beside
// "CI −0.5–44.2 B"), and Theil–Sen fits of wander-inflated series agree
// the same way, at 95 % and at an until-decided look's level (p < (1 −
// level)/2 exactly when the interval at that level lies above 0).
func TestSlopePAgreesWithItsInterval(t *testing.T) {
	cases := []struct {
		name string
		fit  trend.Fit
		want bool // p < 0.025
	}{
		{"the issue's: lower half wide, upper narrow", trend.Fit{Slope: 1.71, Lo: -0.66, Hi: 2.62}, false},
		{"lower half narrow, upper wide", trend.Fit{Slope: 1, Lo: 0.01, Hi: 9}, true},
		{"symmetric, clear of 0", trend.Fit{Slope: 3, Lo: 1, Hi: 5}, true},
		{"lower end at 0", trend.Fit{Slope: 3, Lo: 0, Hi: 4}, false},
		{"no width, growing", trend.Fit{Slope: 2, Lo: 2, Hi: 2}, true},
		{"no width, flat", trend.Fit{Slope: 0, Lo: 0, Hi: 0}, false},
		{"falling", trend.Fit{Slope: -1, Lo: -2, Hi: 0}, false},
		{"no fit", trend.Fit{Slope: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}, false},
	}
	for _, c := range cases {
		if got := slopeP(c.fit) < 0.025; got != c.want {
			t.Errorf("%s: slopeP(%+v) = %.3g; want p < 0.025 = %v", c.name, c.fit, slopeP(c.fit), c.want)
		}
	}
	rng := rand.New(rand.NewPCG(41, 5))
	var disagree, lopsided int
	for i := range 2000 {
		n := 12 + rng.IntN(40)
		x, y := make([]float64, n), make([]float64, n)
		var w float64
		for j := range n {
			w = 0.9*w + rng.NormFloat64()
			x[j] = float64(j)
			y[j] = 0.05*rng.Float64()*float64(j) + w + 0.3*rng.NormFloat64()
		}
		vif := 1 + 9*rng.Float64()
		f := widen(trend.TheilSenInflated(x, y, 0.95, vif), 0.01)
		if math.Abs((f.Hi-f.Slope)-(f.Slope-f.Lo)) > 0.2*(f.Hi-f.Lo) {
			lopsided++
		}
		if p := slopeP(f); (p < 0.025) != (f.Lo > 0) {
			disagree++
			if disagree <= 5 {
				t.Errorf("series %d: p = %.4g beside 95 %% CI %.4g–%.4g (slope %.4g)", i, p, f.Lo, f.Hi, f.Slope)
			}
		}
		// An until-decided look's interval, at its own level.
		lv := []float64{0.99, 0.999, 0.99986}[i%3]
		fl := widen(trend.TheilSenInflated(x, y, lv, vif), 0.01)
		if p := slopePAt(fl, lv); (p < (1-lv)/2) != (fl.Lo > 0) {
			disagree++
			if disagree <= 5 {
				t.Errorf("series %d: p = %.4g beside %.5g %% CI %.4g–%.4g (slope %.4g)", i, p, 100*lv, fl.Lo, fl.Hi, fl.Slope)
			}
		}
	}
	t.Logf("2 000 Theil–Sen fits under AR(1) wander, %d lopsided by over a fifth of their width: %d disagreeing with their interval, at 95 %% or a look's level", lopsided, disagree)
	if lopsided == 0 {
		t.Errorf("got no lopsided interval; the check needs some")
	}
}
