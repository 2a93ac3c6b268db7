package verdict

import (
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// Binning: a short series is fitted point by point; a longer one is cut
// into bins of requests that each span about binSeconds of the soak, so
// that every bin holds a GC trough even when the cycle is long (Go forces a
// GC every 2 min), with at least minBins (so the last third keeps six) and
// at most maxBins.
const (
	unbinnedMax   = 64
	minBins       = 18
	maxBins       = 128
	binSeconds    = 150
	minSoakPoints = 12 // below this the verdict is inconclusive
)

// series is the soak of one incarnation, sorted by requests.
type series struct {
	x, y, sec []float64
	inc       int
}

// splitSoak returns the soak points of each incarnation, and the number of
// incarnations seen anywhere in the run.
func splitSoak(pts []Point) (map[int]*series, int) {
	counts := map[int]int{}
	for _, p := range pts {
		if _, ok := counts[p.Incarnation]; !ok || p.Phase == Soak {
			counts[p.Incarnation] += btoi(p.Phase == Soak)
		}
	}
	by := map[int]*series{}
	for inc, n := range counts {
		if n > 0 {
			by[inc] = &series{inc: inc, x: make([]float64, 0, n), y: make([]float64, 0, n), sec: make([]float64, 0, n)}
		}
	}
	for _, p := range pts {
		if s := by[p.Incarnation]; s != nil && p.Phase == Soak {
			s.x, s.y, s.sec = append(s.x, p.Requests), append(s.y, p.Value), append(s.sec, p.Seconds)
		}
	}
	for _, s := range by {
		s.sort()
	}
	return by, len(counts)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *series) sort() {
	if sort.Float64sAreSorted(s.x) {
		return
	}
	idx := make([]int, len(s.x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.x[idx[a]] < s.x[idx[b]] })
	x, y, sec := make([]float64, len(idx)), make([]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		x[k], y[k], sec[k] = s.x[i], s.y[i], s.sec[i]
	}
	s.x, s.y, s.sec = x, y, sec
}

func (s *series) span() float64 {
	if len(s.x) == 0 {
		return 0
	}
	return s.x[len(s.x)-1] - s.x[0]
}

// driving picks the incarnation whose soak covered the most requests (ties:
// the later one). Fitting one incarnation, never across a restart, keeps
// the reset from reading as a fall and the new process's warm-up from
// reading as growth; the longest one has the most power and the best view
// of the last third. Pooling within-incarnation slopes was rejected: a
// short incarnation ending in a crash would add a warm-up ramp to the pool.
func driving(by map[int]*series) *series {
	var best *series
	for _, s := range by {
		if best == nil || s.span() > best.span() || s.span() == best.span() && s.inc > best.inc {
			best = s
		}
	}
	return best
}

// binCount is the number of bins for n soak samples over seconds.
func binCount(n int, seconds float64) int {
	if n <= unbinnedMax {
		return n
	}
	return min(n, max(minBins, min(maxBins, int(seconds/binSeconds))))
}

// reduce bins the series over requests.
func (s *series) reduce(r trend.Reduce) trend.Binned {
	b := binCount(len(s.x), s.sec[len(s.sec)-1]-s.sec[0])
	if b == len(s.x) {
		n := make([]int, len(s.x))
		for i := range n {
			n[i] = 1
		}
		return trend.Binned{X: s.x, Y: s.y, N: n}
	}
	return trend.Bin(s.x, s.y, b, r)
}
