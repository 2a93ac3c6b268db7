package trend

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTheilSenInflated checks that the variance inflation stretches both
// sides of Sen's interval by √vif about the slope, and leaves the slope
// and intercept alone.
func TestTheilSenInflated(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	x, y := make([]float64, 60), make([]float64, 60)
	for i := range x {
		x[i] = float64(i)
		y[i] = 2*x[i] + 10*rng.NormFloat64()
	}
	base := TheilSenConf(x, y, 0.95)
	if !(base.Lo < base.Slope && base.Slope < base.Hi) {
		t.Fatalf("TheilSenConf = %+v; want Lo < Slope < Hi", base)
	}
	for _, vif := range []float64{0.5, 1, 4, 9} {
		got := TheilSenInflated(x, y, 0.95, vif)
		k := math.Sqrt(math.Max(vif, 1))
		wantLo := base.Slope - k*(base.Slope-base.Lo)
		wantHi := base.Slope + k*(base.Hi-base.Slope)
		if got.Slope != base.Slope || got.Intercept != base.Intercept {
			t.Errorf("vif %g: slope, intercept = %g, %g; want %g, %g", vif, got.Slope, got.Intercept, base.Slope, base.Intercept)
		}
		if !near(got.Lo, wantLo, 1e-9) || !near(got.Hi, wantHi, 1e-9) {
			t.Errorf("vif %g: interval [%g, %g]; want [%g, %g], each side of [%g, %g] stretched by %g about %g",
				vif, got.Lo, got.Hi, wantLo, wantHi, base.Lo, base.Hi, k, base.Slope)
		}
	}
}
