package verdict

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/trend"
)

// TestGoesOnOverStop: over a 2 h soak at 500 req/s (144 points, 0.5 MiB
// of AR(1) wander, ρ 0.7 between points), one slowdown from 40 to 20
// B/request and then straight growth (the design), and a
// straight leak of 10× the horizon floor, beat every curve that stops
// under the floor by stopMargin; a cache of 8 MiB filling with τ of one
// soak and √-creep of 16 MiB, both of which stop under it, do not, in
// each of seeds 1–20. (Over 200 seeds, caches of 8 and 32 MiB with τ of
// 0.3–2 soaks read ΔBIC ≥ 8 in 0–1 each: a scratch run of this harness.)
func TestGoesOnOverStop(t *testing.T) {
	const rate, soak, m = 500.0, 7200.0, 144
	total := rate * soak
	fl := floorsFor(MemoryThresholds, rate*3600, 0, 0)
	for _, tt := range []struct {
		name string
		y    func(q float64) float64
		goes bool
	}{
		{"40 → 20 at mid-run", func(q float64) float64 { return 40*math.Min(q, total/2) + 20*math.Max(q-total/2, 0) }, true},
		{"straight at 10× the floor", func(q float64) float64 { return 10 * fl.horizon * q }, true},
		{"cache of 8 MiB, τ 1 soak", func(q float64) float64 { return 8 * mib * -math.Expm1(-q/total) }, false},
		{"√-creep of 16 MiB", func(q float64) float64 { return 16 * mib * math.Sqrt(q/total) }, false},
	} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed+1, 41))
			b := trend.Binned{X: make([]float64, m), Y: make([]float64, m), N: make([]int, m)}
			w := 0.0
			for i := range m {
				q := total * (float64(i) + 0.5) / m
				w = 0.7*w + math.Sqrt(1-0.49)*0.5*mib*rng.NormFloat64()
				b.X[i], b.Y[i], b.N[i] = q, 100*mib+tt.y(q)+w, 50
			}
			g := fit{b: b, span: b.X[m-1] - b.X[0]}.goesOnOverStop(fl)
			lo, hi = math.Min(lo, g.dBIC), math.Max(hi, g.dBIC)
		}
		t.Logf("%s: ΔBIC %.1f to %.1f", tt.name, lo, hi)
		if tt.goes && lo < stopMargin || !tt.goes && hi >= stopMargin {
			t.Errorf("%s: ΔBIC %.1f to %.1f over 20 seeds; want all %s %d", tt.name, lo, hi, map[bool]string{true: "≥", false: "<"}[tt.goes], stopMargin)
		}
	}
}
