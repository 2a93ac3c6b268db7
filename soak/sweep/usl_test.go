package sweep

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var defaultLadder = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}

// TestFitUSL fits noisy synthetic curves of known σ and κ: each
// parameter within 10 %, the peak within one level of the ladder.
func TestFitUSL(t *testing.T) {
	cases := []struct {
		name                 string
		sigma, kappa, lambda float64
	}{
		{"contention and coherency", 0.05, 0.0005, 1000},
		{"mostly coherency", 0.01, 0.0001, 4600},
		{"strong contention", 0.2, 0.0001, 200},
	}
	for _, c := range cases {
		for seed := range uint64(5) {
			rng := rand.New(rand.NewPCG(seed, 25))
			truth := USL{Sigma: c.sigma, Kappa: c.kappa, Lambda: c.lambda}
			x := make([]float64, len(defaultLadder))
			for i, n := range defaultLadder {
				x[i] = truth.At(n) * (1 + 0.01*rng.NormFloat64())
			}
			u := FitUSL(defaultLadder, x)
			for _, p := range []struct {
				name      string
				got, want float64
			}{{"sigma", u.Sigma, c.sigma}, {"kappa", u.Kappa, c.kappa}, {"lambda", u.Lambda, c.lambda}} {
				if math.Abs(p.got/p.want-1) > 0.10 {
					t.Errorf("%s seed %d: %s = %.4g; want %.4g within 10 %%", c.name, seed, p.name, p.got, p.want)
				}
			}
			want := math.Sqrt((1 - c.sigma) / c.kappa)
			if lo, hi := levelAround(want); u.Peak < lo || u.Peak > hi {
				t.Errorf("%s seed %d: peak = %.1f; want %.1f, between the levels %.0f and %.0f", c.name, seed, u.Peak, want, lo, hi)
			}
			if u.R2 < 0.95 {
				t.Errorf("%s seed %d: r2 = %.3f; want >= 0.95", c.name, seed, u.R2)
			}
		}
	}
}

// levelAround is the ladder's levels one step either side of n.
func levelAround(n float64) (lo, hi float64) {
	lo, hi = defaultLadder[0], defaultLadder[len(defaultLadder)-1]
	for i, l := range defaultLadder {
		if l <= n && i > 0 {
			lo = defaultLadder[i-1]
		}
		if l >= n && i+1 < len(defaultLadder) {
			hi = defaultLadder[i+1]
			break
		}
	}
	return lo, hi
}

// TestFitUSLLinear: a server that scales in proportion has σ and κ near 0
// and no peak within reach.
func TestFitUSLLinear(t *testing.T) {
	n := []float64{1, 2, 5, 10, 20}
	x := []float64{50, 100, 250, 500, 1000}
	u := FitUSL(n, x)
	if !u.OK || u.Sigma > 0.01 || (u.Peak != 0 && u.Peak < 1000) || math.Abs(u.Lambda-50) > 0.5 {
		t.Errorf("FitUSL(linear) = %+v; want σ ≈ 0, λ = 50, no peak before 1000", u)
	}
	if u := FitUSL(n[:2], x[:2]); u.OK {
		t.Errorf("FitUSL(2 levels).OK = true; want false")
	}
}

// TestSynBands: the retransmit schedule with and without linear timeouts.
func TestSynBands(t *testing.T) {
	modes := func(bs []band) []float64 {
		var m []float64
		for _, b := range bs {
			m = append(m, b.mode)
		}
		return m
	}
	for _, c := range []struct {
		linear int
		want   []float64
	}{{0, []float64{1, 3, 7, 15}}, {4, []float64{1, 2, 3, 4, 5, 7, 11}}} {
		if got := modes(synBands(c.linear)); !slices.Equal(got, c.want) {
			t.Errorf("synBands(%d) modes = %v; want %v", c.linear, got, c.want)
		}
	}
}
