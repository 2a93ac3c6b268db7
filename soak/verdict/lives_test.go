package verdict

import (
	"math"
	"math/rand/v2"
	"testing"
)

// recycledLives returns n lives of a recycled worker pool over a soak
// starting at second 0: life i starts at 10·i s (all but the first are
// replacements) and is sampled every second for pts samples; its value is
// rise(k) at its k-th sample plus noise of sd (seeded by seed), and it
// serves 1 request a second.
func recycledLives(n, pts int, seed uint64, sd float64, rise func(k int) float64) ([][]Point, float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var lives [][]Point
	last := 0.0
	for i := range n {
		var l []Point
		for k := range pts {
			sec := float64(10*i + k)
			v := 1e6 + rise(k) + sd*rng.NormFloat64()
			l = append(l, Point{Requests: sec, Seconds: sec, Value: v, Incarnation: 1, Phase: Soak})
			last = math.Max(last, sec)
		}
		lives = append(lives, l)
	}
	return lives, last
}

// startup is a life that grows 1000 a sample through its first third
// (pools, caches) and is flat after.
func startup(pts int) func(k int) float64 {
	return func(k int) float64 { return 1000 * float64(min(k, pts/3)) }
}

func TestFitLivesSkipsStartupThird(t *testing.T) {
	const pts = 30
	lives, reqs := recycledLives(8, pts, 1, 0, startup(pts))
	lf, ok := fitLives(lives, reqs, 0)
	if !ok {
		t.Fatalf("fitLives: ok = false with %d lives; want a fit", lf.lives)
	}
	if lf.perRequest != 0 || lf.hi > 0 {
		t.Errorf("perRequest = %g, interval [%g, %g]; want 0: each life is flat after its start-up third", lf.perRequest, lf.lo, lf.hi)
	}
}

func TestFitLivesMinimumLives(t *testing.T) {
	const pts = 30
	grow := func(k int) float64 { return 100 * float64(k) }
	for _, tt := range []struct {
		n  int
		ok bool
	}{{4, false}, {5, true}} {
		lives, reqs := recycledLives(tt.n, pts, 2, 10, grow)
		lf, ok := fitLives(lives, reqs, 0)
		if ok != tt.ok || lf.lives != tt.n {
			t.Errorf("%d lives: ok = %v, lives = %d; want ok = %v (at least %d lives)", tt.n, ok, lf.lives, tt.ok, minLives)
		}
	}
}

// TestFitLivesOneSidedP checks that p is the one-sided tail of the
// bootstrap normal whose 95 % interval fitLives reports: growth is the
// only alternative, so p < 0.5 whenever the estimate is above zero.
func TestFitLivesOneSidedP(t *testing.T) {
	const pts = 30
	// Slight growth in much noise: z near 1, where doubling p matters.
	grow := func(k int) float64 { return 2 * float64(k) }
	for seed := uint64(1); seed <= 20; seed++ {
		lives, reqs := recycledLives(8, pts, seed, 200, grow)
		lf, ok := fitLives(lives, reqs, 0)
		if !ok || lf.hi <= lf.lo {
			t.Fatalf("seed %d: ok = %v, interval [%g, %g]; want a fit with a spread", seed, ok, lf.lo, lf.hi)
		}
		se := (lf.hi - lf.lo) / (2 * 1.96)
		want := 0.5 * math.Erfc(lf.perRequest/se/math.Sqrt2)
		if math.Abs(lf.p-want) > 1e-9 {
			t.Errorf("seed %d: p = %g; want %g, the one-sided tail of estimate %g with interval [%g, %g]", seed, lf.p, want, lf.perRequest, lf.lo, lf.hi)
		}
		if lf.perRequest > 0 && lf.p >= 0.5 {
			t.Errorf("seed %d: p = %g for a positive estimate %g; want < 0.5 (one-sided)", seed, lf.p, lf.perRequest)
		}
	}
}
