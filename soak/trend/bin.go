package trend

import (
	"math"
	"sort"
)

// Reduce says how a bin's values become one.
type Reduce int

// Reductions of a bin.
const (
	// ByMin keeps the bin's smallest value: the lower envelope, which sees
	// through a GC sawtooth (its troughs are the live heap).
	ByMin Reduce = iota
	// ByMedian keeps the bin's median value.
	ByMedian
)

// Binned is a series reduced over bins of x.
type Binned struct {
	X []float64 // mean x of the points in each non-empty bin
	Y []float64 // the reduced y of each non-empty bin
	N []int     // points in each non-empty bin
}

// Bin splits [min x, max x] into the given number of equal-width bins and
// reduces the y values in each by r; empty bins are dropped. Each bin's x is
// the mean x of its points, which for the lower envelope keeps the slope
// unbiased (the minimum's own x would correlate with its noise). x need not
// be sorted. It is O(n) plus the median selection per bin.
func Bin(x, y []float64, bins int, r Reduce) Binned {
	n := min(len(x), len(y))
	if n == 0 || bins < 1 {
		return Binned{}
	}
	lo, hi := x[0], x[0]
	for _, v := range x[:n] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	idx := make([][]int, bins)
	width := (hi - lo) / float64(bins)
	for i := 0; i < n; i++ {
		b := bins - 1
		if width > 0 {
			b = min(int((x[i]-lo)/width), bins-1)
		}
		idx[b] = append(idx[b], i)
	}
	var out Binned
	for _, members := range idx {
		if len(members) == 0 {
			continue
		}
		out.X = append(out.X, meanAt(x, members))
		out.Y = append(out.Y, reduceAt(y, members, r))
		out.N = append(out.N, len(members))
	}
	return out
}

func meanAt(v []float64, at []int) float64 {
	var s float64
	for _, i := range at {
		s += v[i]
	}
	return s / float64(len(at))
}

func reduceAt(v []float64, at []int, r Reduce) float64 {
	if r == ByMin {
		m := v[at[0]]
		for _, i := range at[1:] {
			m = math.Min(m, v[i])
		}
		return m
	}
	s := make([]float64, len(at))
	for k, i := range at {
		s[k] = v[i]
	}
	sort.Float64s(s)
	return median(s)
}
