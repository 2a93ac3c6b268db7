package trend

import (
	"math"
	"sort"
)

// MK is the result of a Mann–Kendall trend test.
type MK struct {
	N int     // points used
	S float64 // Kendall's S: concordant minus discordant pairs
	// Var is the variance of S under no trend, corrected for ties in x and
	// in y (Kendall 1975, the tau-b variance).
	Var float64
	Z   float64 // normal score of S with continuity correction
	// PIncrease is the one-sided p-value against the alternative of an
	// increasing trend: the test a leak needs, since a falling resource is
	// never a leak.
	PIncrease float64
	// PTwoSided is the two-sided p-value (trend in either direction).
	PTwoSided float64
}

// MannKendall tests y for a monotonic trend along x. Pairs tied in x
// contribute nothing to S. It runs in O(n log n): points are visited in x
// order and a Fenwick tree over the ranks of y counts the earlier points
// below and above each one. With fewer than 3 points it returns p-values of
// 1.
func MannKendall(x, y []float64) MK { return MannKendallInflated(x, y, 1) }

// MannKendallInflated is MannKendall with Var(S) multiplied by vif ≥ 1,
// the variance inflation of autocorrelated errors (see VarianceInflation;
// Hamed and Rao 1998 correct the same variance by an effective sample
// size). Points with a non-finite x or y are dropped.
func MannKendallInflated(x, y []float64, vif float64) MK {
	x, y = Finite(x, y)
	n := len(x)
	r := MK{N: n, PIncrease: 1, PTwoSided: 1}
	if n < 3 {
		return r
	}
	r.S = kendallS(x, y)
	r.Var = varianceS(x, y) * math.Max(vif, 1)
	if r.Var <= 0 {
		return r
	}
	switch {
	case r.S > 0:
		r.Z = (r.S - 1) / math.Sqrt(r.Var)
	case r.S < 0:
		r.Z = (r.S + 1) / math.Sqrt(r.Var)
	}
	r.PIncrease = upperTail(r.Z)
	r.PTwoSided = math.Min(1, 2*upperTail(math.Abs(r.Z)))
	return r
}

// upperTail is P(Z > z) for a standard normal Z, accurate far into the tail.
func upperTail(z float64) float64 {
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// kendallS counts concordant minus discordant pairs in O(n log n).
func kendallS(x, y []float64) float64 {
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return x[order[a]] < x[order[b]] })
	rank, m := denseRanks(y)
	tree := make([]int, m+1)
	var s float64
	seen := 0
	for i := 0; i < n; {
		j := i
		for j < n && x[order[j]] == x[order[i]] {
			j++
		}
		for _, k := range order[i:j] { // query the group before adding it
			below := fenwickSum(tree, rank[k]-1)
			above := seen - fenwickSum(tree, rank[k])
			s += float64(below - above)
		}
		for _, k := range order[i:j] {
			fenwickAdd(tree, rank[k])
		}
		seen += j - i
		i = j
	}
	return s
}

// denseRanks maps each value to its 1-based rank among distinct values.
func denseRanks(v []float64) ([]int, int) {
	sorted := append([]float64(nil), v...)
	sort.Float64s(sorted)
	distinct := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			distinct = append(distinct, s)
		}
	}
	rank := make([]int, len(v))
	for i, x := range v {
		rank[i] = sort.SearchFloat64s(distinct, x) + 1
	}
	return rank, len(distinct)
}

func fenwickAdd(t []int, i int) {
	for ; i < len(t); i += i & -i {
		t[i]++
	}
}

func fenwickSum(t []int, i int) int {
	s := 0
	for ; i > 0; i -= i & -i {
		s += t[i]
	}
	return s
}

// tieSums returns Σt(t−1)(2t+5), Σt(t−1)(t−2) and Σt(t−1) over the groups
// of tied values in v.
func tieSums(v []float64) (a, b, c float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		t := float64(j - i)
		a += t * (t - 1) * (2*t + 5)
		b += t * (t - 1) * (t - 2)
		c += t * (t - 1)
		i = j
	}
	return a, b, c
}

// varianceS is Var(S) under the null with ties in both x and y.
func varianceS(x, y []float64) float64 {
	n := float64(len(x))
	xa, xb, xc := tieSums(x)
	ya, yb, yc := tieSums(y)
	v := (n*(n-1)*(2*n+5) - xa - ya) / 18
	if n > 2 {
		v += xb * yb / (9 * n * (n - 1) * (n - 2))
	}
	if n > 1 {
		v += xc * yc / (2 * n * (n - 1))
	}
	return v
}
