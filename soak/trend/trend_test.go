package trend

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func seq(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i + 1)
	}
	return x
}

// Hand-computed: y = 1 3 2 5 4 at x = 1..5 has 8 concordant and 2
// discordant pairs, so S = 6 and Var(S) = 5·4·15/18 = 16.667; with
// continuity correction Z = 5/√16.667 = 1.2247, one-sided p = 0.1103.
// y = 1 2 2 3 has S = 5 and one tie pair: Var = (4·3·13 − 2·1·9)/18 = 7.667.
func TestMannKendall(t *testing.T) {
	tests := []struct {
		name        string
		x, y        []float64
		s, v, z, p1 float64
	}{
		{"textbook", seq(5), []float64{1, 3, 2, 5, 4}, 6, 50.0 / 3, 1.224745, 0.110336},
		{"ties in y", seq(4), []float64{1, 2, 2, 3}, 5, 23.0 / 3, 4 / math.Sqrt(23.0/3), upperTail(4 / math.Sqrt(23.0/3))},
		{"decreasing", seq(4), []float64{4, 3, 2, 1}, -6, 26.0 / 3, -5 / math.Sqrt(26.0/3), upperTail(-5 / math.Sqrt(26.0/3))},
		{"all tied y", seq(4), []float64{7, 7, 7, 7}, 0, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := MannKendall(tc.x, tc.y)
			if r.S != tc.s || !near(r.Var, tc.v, 1e-9) || !near(r.Z, tc.z, 1e-5) || !near(r.PIncrease, tc.p1, 1e-5) {
				t.Errorf("got S=%v Var=%v Z=%v p=%v; want S=%v Var=%v Z=%v p=%v", r.S, r.Var, r.Z, r.PIncrease, tc.s, tc.v, tc.z, tc.p1)
			}
		})
	}
}

// bruteS is the O(n²) definition of Kendall's S.
func bruteS(x, y []float64) float64 {
	var s float64
	for i := range x {
		for j := range x {
			if x[j] > x[i] {
				s += sign(y[j] - y[i])
			}
		}
	}
	return s
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func TestKendallSMatchesBruteForceWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 3 + rng.IntN(60)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(n)) // ties in x
			y[i] = float64(rng.IntN(5)) // heavy ties in y, like fd counts
		}
		if got, want := kendallS(x, y), bruteS(x, y); got != want {
			t.Fatalf("trial %d: got S=%v; want %v", trial, got, want)
		}
	}
}

// The tie-corrected variance must equal the exact permutation variance of
// S; check it by enumerating all permutations of a small tied sample.
func TestVarianceSMatchesPermutations(t *testing.T) {
	x := []float64{1, 2, 2, 3, 4, 5}
	y := []float64{1, 1, 2, 3, 3, 3}
	var sum, sum2, count float64
	permute(y, 0, func(p []float64) {
		s := bruteS(x, p)
		sum, sum2, count = sum+s, sum2+s*s, count+1
	})
	exact := sum2/count - (sum/count)*(sum/count)
	if got := varianceS(x, y); !near(got, exact, 1e-9) {
		t.Errorf("got Var(S)=%v; want %v", got, exact)
	}
}

func permute(v []float64, k int, visit func([]float64)) {
	if k == len(v) {
		visit(v)
		return
	}
	for i := k; i < len(v); i++ {
		v[k], v[i] = v[i], v[k]
		permute(v, k+1, visit)
		v[k], v[i] = v[i], v[k]
	}
}

// Hand-computed: the ten pairwise slopes of y = 1 3 2 5 4 sorted are
// −1 −1 1/3 1/2 3/4 1 1 4/3 2 3, median 0.875; intercept median of
// y − 0.875x = {0.125, 1.25, −0.625, 1.5, −0.375} = 0.125.
// Var(S) = 16.667, C = 1.96·4.082 = 8.002, so the bounds are the
// 0.999-th and 10.001-th slopes: −1 and 3 (clamped).
func TestTheilSen(t *testing.T) {
	tests := []struct {
		name                 string
		x, y                 []float64
		slope, icept, lo, hi float64
	}{
		{"textbook", seq(5), []float64{1, 3, 2, 5, 4}, 0.875, 0.125, -1, 3},
		{"exact line", seq(6), []float64{3, 5, 7, 9, 11, 13}, 2, 1, 2, 2},
		{"outlier", seq(7), []float64{0, 1, 2, 100, 4, 5, 6}, 1, -1, math.NaN(), math.NaN()},
		{"tied x skipped", []float64{1, 1, 2, 3}, []float64{0, 10, 2, 4}, 2, -2, math.NaN(), math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := TheilSen(tc.x, tc.y)
			ok := near(f.Slope, tc.slope, 1e-9) && near(f.Intercept, tc.icept, 1e-9)
			if !math.IsNaN(tc.lo) {
				ok = ok && near(f.Lo, tc.lo, 1e-9) && near(f.Hi, tc.hi, 1e-9)
			}
			if !ok || f.Lo > f.Slope || f.Hi < f.Slope {
				t.Errorf("got slope=%v icept=%v CI=[%v,%v]; want %v %v [%v,%v]", f.Slope, f.Intercept, f.Lo, f.Hi, tc.slope, tc.icept, tc.lo, tc.hi)
			}
		})
	}
}

// With independent noise, Sen's 95 % interval must cover the true slope
// about 95 % of the time.
func TestTheilSenCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 400
	covered := 0
	for range trials {
		x := seq(40)
		y := make([]float64, len(x))
		for i := range y {
			y[i] = 2.5*x[i] + rng.NormFloat64()*10
		}
		if f := TheilSen(x, y); f.Lo <= 2.5 && 2.5 <= f.Hi {
			covered++
		}
	}
	rate := float64(covered) / trials
	t.Logf("Theil–Sen 95 %% CI coverage: %.3f over %d series of 40 points", rate, trials)
	if rate < 0.92 || rate > 0.985 {
		t.Errorf("got coverage %.3f; want about 0.95", rate)
	}
}

func TestOLS(t *testing.T) {
	f := OLS([]float64{1, 2, 3, 4}, []float64{2, 4, 5, 8})
	// Σ(x−2.5)(y−4.75) = 9.5, Σ(x−2.5)² = 5 → slope 1.9, intercept −0.
	if !near(f.Slope, 1.9, 1e-12) || !near(f.Intercept, 0, 1e-12) {
		t.Errorf("got slope=%v icept=%v; want 1.9 0", f.Slope, f.Intercept)
	}
}

func TestBin(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 9}
	y := []float64{5, 1, 3, 7, 2, 8, 4}
	tests := []struct {
		name   string
		r      Reduce
		wantX  []float64
		wantY  []float64
		wantNs []int
	}{
		// Width 3: bins [0,3) [3,6) [6,9]; the last holds x=9 alone.
		{"min", ByMin, []float64{1, 4, 9}, []float64{1, 2, 4}, []int{3, 3, 1}},
		{"median", ByMedian, []float64{1, 4, 9}, []float64{3, 7, 4}, []int{3, 3, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := Bin(x, y, 3, tc.r)
			if len(b.X) != len(tc.wantX) {
				t.Fatalf("got %d bins; want %d", len(b.X), len(tc.wantX))
			}
			for i := range b.X {
				if b.X[i] != tc.wantX[i] || b.Y[i] != tc.wantY[i] || b.N[i] != tc.wantNs[i] {
					t.Errorf("bin %d: got (%v,%v,%d); want (%v,%v,%d)", i, b.X[i], b.Y[i], b.N[i], tc.wantX[i], tc.wantY[i], tc.wantNs[i])
				}
			}
		})
	}
}

func BenchmarkMannKendall1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := make([]float64, 1_000_000), make([]float64, 1_000_000)
	for i := range x {
		x[i], y[i] = float64(i), float64(rng.IntN(1000))
	}
	for b.Loop() {
		MannKendall(x, y)
	}
}

func BenchmarkBin1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := make([]float64, 1_000_000), make([]float64, 1_000_000)
	for i := range x {
		x[i], y[i] = float64(i), rng.NormFloat64()
	}
	for b.Loop() {
		Bin(x, y, 256, ByMin)
	}
}

// The selection-based Theil–Sen must agree with sorting every slope.
func TestTheilSenSelectMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := 2 + rng.IntN(80)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(2 * n))
			y[i] = float64(rng.IntN(10)) + 0.1*x[i]
		}
		got := TheilSen(x, y)
		s := pairSlopes(x, y)
		if len(s) == 0 {
			continue
		}
		sort.Float64s(s)
		c := 1.959963984540054 * math.Sqrt(varianceS(x, y))
		np := float64(len(s))
		lo, mid, hi := orderStat(s, (np-c)/2), median(s), orderStat(s, (np+c)/2+1)
		if !near(got.Lo, lo, 1e-12) || !near(got.Slope, mid, 1e-12) || !near(got.Hi, hi, 1e-12) {
			t.Fatalf("trial %d: got [%v %v %v]; want [%v %v %v]", trial, got.Lo, got.Slope, got.Hi, lo, mid, hi)
		}
	}
}

func BenchmarkTheilSen256(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	x, y := seq(256), make([]float64, 256)
	for i := range y {
		y[i] = x[i] + rng.NormFloat64()
	}
	for b.Loop() {
		TheilSen(x, y)
	}
}
