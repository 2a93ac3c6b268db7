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
	X []float64 // x of each non-empty bin: see Bin
	Y []float64 // the reduced y of each non-empty bin
	N []int     // points in each non-empty bin
}

// Bin splits [min x, max x] into the given number of equal-width bins and
// reduces each by r; empty bins are dropped. With ByMin a bin becomes its
// lowest point, x included: under a GC sawtooth the minimum is a trough
// whose place in the bin drifts as the cycle lengthens, and the bin's mean
// x would misplace it. With ByMedian a bin becomes its mean x and median y.
// x need not be sorted. It is O(n) plus sorting each bin for the median.
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
		bx, by := reduceAt(x, y, members, r)
		out.X, out.Y = append(out.X, bx), append(out.Y, by)
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

// reduceAt reduces the points at the given indices to one: the lowest
// point itself for ByMin, the mean x and median y for ByMedian.
func reduceAt(x, y []float64, at []int, r Reduce) (float64, float64) {
	if r == ByMin {
		m := at[0]
		for _, i := range at[1:] {
			if y[i] < y[m] {
				m = i
			}
		}
		return x[m], y[m]
	}
	s := make([]float64, len(at))
	for k, i := range at {
		s[k] = y[i]
	}
	sort.Float64s(s)
	return meanAt(x, at), median(s)
}

// BinEqual splits the points, taken in the order given (sorted by x, as
// samples come), into the given number of consecutive bins that hold equal
// numbers of points (the first ones one more when it does not divide), and
// reduces each by r. Samples taken at a fixed interval make these bins
// equal in time, so every bin's minimum is drawn from as many samples, and
// a drifting throughput, which makes bins of equal requests hold unequal
// numbers of samples, cannot bias the envelope.
func BinEqual(x, y []float64, bins int, r Reduce) Binned {
	n := min(len(x), len(y))
	if n == 0 || bins < 1 {
		return Binned{}
	}
	bins = min(bins, n)
	out := Binned{X: make([]float64, 0, bins), Y: make([]float64, 0, bins), N: make([]int, 0, bins)}
	at := make([]int, 0, n/bins+1)
	for b, lo := 0, 0; b < bins; b++ {
		size := n / bins
		if b < n%bins {
			size++
		}
		at = at[:0]
		for i := lo; i < lo+size; i++ {
			at = append(at, i)
		}
		lo += size
		bx, by := reduceAt(x, y, at, r)
		out.X, out.Y = append(out.X, bx), append(out.Y, by)
		out.N = append(out.N, size)
	}
	return out
}
