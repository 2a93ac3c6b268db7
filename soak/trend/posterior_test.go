package trend

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWanderInflationReducesToAR1: with no white share it is
// VarianceInflation; with all of it, or no correlation, it is 1; and a
// white share lowers it.
func TestWanderInflationReducesToAR1(t *testing.T) {
	x := seq(48)
	for _, rho := range []float64{0.3, 0.8, 0.97} {
		if got, want := WanderInflation(x, rho, 0), VarianceInflation(x, rho); !near(got, want, 1e-9) {
			t.Errorf("ρ %g, λ 0: got %g; want VarianceInflation's %g", rho, got, want)
		}
		if got := WanderInflation(x, rho, 1); got != 1 {
			t.Errorf("ρ %g, λ 1: got %g; want 1", rho, got)
		}
		if a, b := WanderInflation(x, rho, 0.5), WanderInflation(x, rho, 0); !(a < b) {
			t.Errorf("ρ %g: λ 0.5 gives %g, λ 0 gives %g; want a white share to lower it", rho, a, b)
		}
	}
}

// TestWanderPosteriorReadsTheNoise: on white noise the posterior puts
// its median wander coefficient low and inflates little (64 points
// cannot rule out some slow wander: about 2.5 on average, which the
// interval study prices at 1.1–1.8× the estimates' spread); on wander of
// ρ = 0.9 it puts the median high and inflates at least half as much as
// the true inflation; the weights sum to 1.
func TestWanderPosteriorReadsTheNoise(t *testing.T) {
	const n, reps = 64, 30
	x := seq(n)
	var whiteInf, wanderInf, whiteRho, wanderRho float64
	for r := range reps {
		rng := rand.New(rand.NewPCG(11, uint64(r)))
		w, a := make([]float64, n), make([]float64, n)
		e := rng.NormFloat64() / math.Sqrt(1-0.81)
		for i := range w {
			w[i] = rng.NormFloat64()
			e = 0.9*e + rng.NormFloat64()
			a[i] = e
		}
		pw, pa := WanderPosterior(x, w), WanderPosterior(x, a)
		var sum float64
		for _, v := range pw.W {
			sum += v
		}
		if !near(sum, 1, 1e-9) {
			t.Fatalf("weights sum to %g; want 1", sum)
		}
		whiteInf += pw.Inflation(x) / reps
		wanderInf += pa.Inflation(x) / reps
		whiteRho += pw.Median() / reps
		wanderRho += pa.Median() / reps
	}
	t.Logf("white: inflation %.2f, median ρ %.2f; ρ 0.9: inflation %.2f (true %.2f), median ρ %.2f", whiteInf, whiteRho, wanderInf, VarianceInflation(x, 0.9), wanderRho)
	if whiteInf > 3 || whiteRho > 0.5 {
		t.Errorf("white noise: mean inflation %.2f, median ρ %.2f; want ≤ 3 and ≤ 0.5", whiteInf, whiteRho)
	}
	if want := VarianceInflation(x, 0.9); wanderInf < 0.5*want || wanderRho < 0.7 {
		t.Errorf("ρ 0.9 wander: mean inflation %.2f, median ρ %.2f; want ≥ %.2f (half the true one) and ≥ 0.7", wanderInf, wanderRho, 0.5*want)
	}
}

// TestRemlWanderMatchesDenseAR1: the Kalman filter's restricted
// likelihood equals the one computed from the dense covariance, up to a
// constant that does not depend on ρ or λ.
func TestRemlWanderMatchesDenseAR1(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	x, y := standardise(seq(12)), make([]float64, 12)
	for i := range y {
		y[i] = 0.3*x[i] + rng.NormFloat64()
	}
	var off float64
	for k, c := range [][2]float64{{0, 1}, {0.5, 0.2}, {0.9, 0}, {0.99, 0.5}} {
		d := denseReml(x, y, c[0], c[1]) - remlWander(x, y, c[0], c[1])
		if k == 0 {
			off = d
		} else if !near(d, off, 1e-6) {
			t.Errorf("ρ %g, λ %g: dense − Kalman = %g; want the constant %g", c[0], c[1], d, off)
		}
	}
}

// denseReml is the restricted log-likelihood from Σ = λI + (1−λ)R by
// Cholesky, up to the same constant as remlWander.
func denseReml(x, y []float64, rho, lambda float64) float64 {
	n := len(x)
	s := make([][]float64, n)
	for i := range s {
		s[i] = make([]float64, n)
		for j := range s[i] {
			s[i][j] = (1 - lambda) * math.Pow(rho, math.Abs(float64(i-j)))
			if i == j {
				s[i][j] += lambda
			}
		}
	}
	l := make([][]float64, n) // Cholesky: Σ = LL'
	var logDet float64
	for i := range l {
		l[i] = make([]float64, n)
		for j := 0; j <= i; j++ {
			v := s[i][j]
			for k := 0; k < j; k++ {
				v -= l[i][k] * l[j][k]
			}
			if i == j {
				l[i][i] = math.Sqrt(v)
				logDet += 2 * math.Log(l[i][i])
			} else {
				l[i][j] = v / l[j][j]
			}
		}
	}
	solve := func(b []float64) []float64 { // L⁻¹b
		z := make([]float64, n)
		for i := range z {
			v := b[i]
			for k := 0; k < i; k++ {
				v -= l[i][k] * z[k]
			}
			z[i] = v / l[i][i]
		}
		return z
	}
	one := make([]float64, n)
	for i := range one {
		one[i] = 1
	}
	z1, zx, zy := solve(one), solve(x), solve(y)
	a11, a12, a22 := dot(z1, z1), dot(z1, zx), dot(zx, zx)
	b1, b2 := dot(z1, zy), dot(zx, zy)
	det := a11*a22 - a12*a12
	rss := dot(zy, zy) - (a22*b1*b1-2*a12*b1*b2+a11*b2*b2)/det
	return -0.5*logDet - 0.5*math.Log(det) - float64(n-2)/2*math.Log(rss)
}

// TestWanderPosteriorFromSamples: bins of 30 samples' minima under white
// noise plus AR(1) wander of 6 samples (a fifth of a bin) are nearly
// independent, and the samples say so: the inflation read with their
// prior is under 0.6 of the flat prior's (0.53), which prices in slow
// wander that 48 bins cannot rule out. Under the same fast wander plus a
// slow one of 10 bins, the samples do not talk the slow one away: the
// inflation stays at least 0.7 of the flat prior's (0.77).
func TestWanderPosteriorFromSamples(t *testing.T) {
	const bins, per, reps = 48, 30, 20
	for _, c := range []struct {
		name   string
		slow   float64 // SD of the slow wander
		lo, hi float64 // bounds on the mean ratio of the inflations (from / flat)
	}{
		{"fast wander", 0, 0, 0.6},
		{"fast and slow wander", 1, 0.7, 1.05},
	} {
		var ratio float64
		for r := range reps {
			rng := rand.New(rand.NewPCG(5, uint64(r)))
			x, y := make([]float64, bins*per), make([]float64, bins*per)
			fast, slow := rng.NormFloat64(), rng.NormFloat64()
			pf, ps := math.Exp(-1.0/6), math.Exp(-1.0/(10*per))
			for i := range x {
				fast = pf*fast + math.Sqrt(1-pf*pf)*rng.NormFloat64()
				slow = ps*slow + math.Sqrt(1-ps*ps)*rng.NormFloat64()
				x[i], y[i] = float64(i), fast+0.5*rng.NormFloat64()+c.slow*slow
			}
			b := BinEqual(x, y, bins, ByMin)
			line := TheilSen(b.X, b.Y)
			res, raw := Residuals(b.X, b.Y, line), Residuals(x, y, line)
			ratio += WanderPosteriorFrom(b.X, res, x, raw).Inflation(b.X) / WanderPosterior(b.X, res).Inflation(b.X) / reps
		}
		t.Logf("%s: inflation with the samples' prior over the flat prior's: %.2f", c.name, ratio)
		if ratio < c.lo || ratio > c.hi {
			t.Errorf("%s: got a ratio of inflations %.2f; want %.2f–%.2f", c.name, ratio, c.lo, c.hi)
		}
	}
}
