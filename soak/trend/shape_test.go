package trend

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestHingeFindsTheKnot(t *testing.T) {
	x := seq(40)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 1e8 + 3*math.Min(v, 25)*1e4 // rises to x = 25, then flat
	}
	h, ok := Hinge(x, y)
	if !ok || h.Knot != 25 || !near(h.Before, 3e4, 1e-3) || !near(h.After, 0, 1e-3) || h.SS > 1e-3 {
		t.Errorf("got %+v ok=%v; want knot 25, slopes 30000 then 0, SS 0", h, ok)
	}
}

// TestHingeAt: a hinge fitted at a given knot agrees with the best
// hinge there, and a late rise (flat, then 50 a point from the 31st point) is
// fitted exactly at its own knot.
func TestHingeAt(t *testing.T) {
	x := seq(40)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 2e7 + 50*math.Max(v-x[30], 0)
	}
	h, ok := HingeAt(x, y, 30)
	if !ok || h.Index != 30 || !near(h.Before, 0, 1e-6) || !near(h.After, 50, 1e-6) || h.SS > 1e-3 || len(h.Resid) != len(x) {
		t.Errorf("got %+v ok=%v; want the knot at 30, slopes 0 then 50, SS 0", h, ok)
	}
	best, _ := Hinge(x, y)
	if at, _ := HingeAt(x, y, best.Index); at.SS != best.SS || at.After != best.After {
		t.Errorf("HingeAt(%d) = %+v; want the best hinge's %+v", best.Index, at, best)
	}
	if _, ok := HingeAt(x, y, 0); ok {
		t.Error("HingeAt(0): ok; want no knot at the first point")
	}
}

func TestStepLine(t *testing.T) {
	x := seq(30)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 5e7 + 2*v
		if i >= 18 {
			y[i] += 4 << 20
		}
	}
	s, ok := StepLine(x, y)
	if !ok || s.Index != 18 || !near(s.Size, 4<<20, 1e-3) || !near(s.Slope, 2, 1e-6) {
		t.Errorf("got %+v ok=%v; want the step at index 18 of 4 MiB over slope 2", s, ok)
	}
}

func TestStaircaseMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	y := make([]float64, 14)
	for i := range y {
		y[i] = float64(i/5)*10 + rng.NormFloat64()
	}
	lv := Staircase(y, 3)
	if got := lv[2].Starts; len(got) != 2 || got[0] != 5 || got[1] != 10 {
		t.Errorf("got starts %v; want [5 10]", got)
	}
	// Brute force over every pair of cuts.
	best := math.Inf(1)
	for a := 1; a < len(y); a++ {
		for b := a + 1; b < len(y); b++ {
			best = math.Min(best, ssAbout(y[:a])+ssAbout(y[a:b])+ssAbout(y[b:]))
		}
	}
	if !near(lv[2].SS, best, 1e-9) {
		t.Errorf("got SS %v; want %v", lv[2].SS, best)
	}
	if !near(lv[0].SS, ssAbout(y), 1e-9) {
		t.Errorf("one segment: got SS %v; want %v", lv[0].SS, ssAbout(y))
	}
}

func ssAbout(v []float64) float64 { return variance(v) * float64(len(v)) }

// The factor must make the residual-based slope variance right: check it
// against a simulation of AR(1) series, where the slope's true variance is
// compared with σ̂²/Σc² from each series' own residuals.
func TestVarianceInflation(t *testing.T) {
	if got := VarianceInflation(seq(200), 0); got != 1 {
		t.Errorf("rho 0: got %v; want 1", got)
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		n   int
		rho float64
	}{{32, 0.5}, {32, 0.9}, {128, 0.8}} {
		x := seq(tc.n)
		var slopes, naive []float64
		for range 4000 {
			y := make([]float64, tc.n)
			e := rng.NormFloat64() / math.Sqrt(1-tc.rho*tc.rho)
			for i := range y {
				e = tc.rho*e + rng.NormFloat64()
				y[i] = e
			}
			f := OLS(x, y)
			r := Residuals(x, y, f)
			var ss, sxx float64
			for i := range r {
				ss += r[i] * r[i]
				d := x[i] - float64(tc.n+1)/2
				sxx += d * d
			}
			slopes = append(slopes, f.Slope)
			naive = append(naive, ss/float64(tc.n-2)/sxx)
		}
		want := variance(slopes) / mean(naive)
		if got := VarianceInflation(x, tc.rho); math.Abs(got/want-1) > 0.1 {
			t.Errorf("n %d rho %v: got %.2f; want about %.2f (simulated)", tc.n, tc.rho, got, want)
		}
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func TestNonFiniteValuesAreDropped(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	y := []float64{1, math.NaN(), 3, math.Inf(1), 5, 6}
	mk := MannKendall(x, y) // used to hang on NaN
	if mk.N != 4 || mk.S != 6 {
		t.Errorf("got N=%d S=%v; want 4 points, S=6", mk.N, mk.S)
	}
	if f := TheilSen(x, y); f.N != 4 || !near(f.Slope, 1, 1e-12) {
		t.Errorf("got %+v; want slope 1 over 4 points", f)
	}
}

func TestBinEqual(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 9}
	y := []float64{5, 1, 3, 7, 2, 8, 4}
	b := BinEqual(x, y, 3, ByMin) // sizes 3, 2, 2
	wantX, wantY, wantN := []float64{1, 4, 9}, []float64{1, 2, 4}, []int{3, 2, 2}
	for i := range wantX {
		if b.X[i] != wantX[i] || b.Y[i] != wantY[i] || b.N[i] != wantN[i] {
			t.Errorf("bin %d: got (%v,%v,%d); want (%v,%v,%d)", i, b.X[i], b.Y[i], b.N[i], wantX[i], wantY[i], wantN[i])
		}
	}
}

func TestCurvature(t *testing.T) {
	x := seq(50)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 1e6 + 40*v - 0.5*v*v + float64(i%2)
	}
	cf, ok := Curvature(x, y)
	if !ok || !near(cf.C, -0.5, 0.01) || cf.SE <= 0 || len(cf.U) != 50 {
		t.Errorf("got %+v ok=%v; want C≈−0.5", cf, ok)
	}
	if got := cf.SlopeAt(10); !near(got, 30, 0.2) { // 40 − 2·0.5·10
		t.Errorf("slope at 10: got %v; want 30", got)
	}
}

func TestMedianFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for n := 1; n < 60; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(20))
		}
		want := Median(v)
		if got := MedianFast(append([]float64(nil), v...)); got != want {
			t.Fatalf("n %d: got %v; want %v", n, got, want)
		}
	}
}
