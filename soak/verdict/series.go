package verdict

import (
	"math"
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// Binning: a short series is fitted point by point; a longer one is cut
// into bins that hold equal numbers of samples (so, at a fixed sampling
// interval, equal time), each spanning about binSeconds of the soak so
// that every bin holds a GC trough even when the cycle is long (Go forces
// a GC every 2 min), with at least minBins and at most maxBins.
const (
	unbinnedMax = 64
	minBins     = 32
	maxBins     = 128
	binSeconds  = 150
	// minSoakPoints is the fewest soak samples a fit is tried on; whether
	// they decide anything is the interval's business, not a count's.
	minSoakPoints = 6
)

// series is the soak of one incarnation, sorted by requests.
type series struct {
	x, y, sec []float64
	inc       int
}

// splitSoak returns the soak points of each incarnation, and the number of
// incarnations seen anywhere in the run. Points with a non-finite field
// are dropped.
func splitSoak(pts []Point) (map[int]*series, int) {
	seen := map[int]bool{}
	by := map[int]*series{}
	for _, p := range pts {
		if !finitePoint(p) {
			continue
		}
		seen[p.Incarnation] = true
		if p.Phase != Soak {
			continue
		}
		s := by[p.Incarnation]
		if s == nil {
			s = &series{inc: p.Incarnation}
			by[p.Incarnation] = s
		}
		s.x, s.y, s.sec = append(s.x, p.Requests), append(s.y, p.Value), append(s.sec, p.Seconds)
	}
	for _, s := range by {
		s.sort()
	}
	return by, len(seen)
}

func finitePoint(p Point) bool {
	for _, v := range []float64{p.Requests, p.Seconds, p.Value} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
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

func (s *series) seconds() float64 {
	if len(s.sec) == 0 {
		return 0
	}
	return s.sec[len(s.sec)-1] - s.sec[0]
}

// driving picks the incarnation whose soak covered the most requests (ties:
// the later one). Fitting one incarnation, never across a restart, keeps
// the reset from reading as a fall and the new process's warm-up from
// reading as growth; the longest one has the most power and the best view
// of the last third. Growth that restarts keep resetting is found by the
// lives check instead (see lives.go).
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

// envelopeQuantile is the quantile of each bin that BinSpread raises by
// the noise's spread there.
const envelopeQuantile = 0.1

// reduce bins the series into bins of equal sample counts, or, when it
// is a sawtooth, into its cycles (see cycles).
func (s *series) reduce(r trend.Reduce, quantum float64) trend.Binned {
	if r == trend.ByMin {
		if starts := s.cycles(quantum); starts != nil {
			return s.byCycles(starts)
		}
	}
	b := binCount(len(s.x), s.seconds())
	if b == len(s.x) {
		n := make([]int, len(s.x))
		for i := range n {
			n[i] = 1
		}
		return trend.Binned{X: s.x, Y: s.y, N: n}
	}
	if r == trend.ByMin && trend.SpreadDrifts(s.y, b) {
		return trend.BinSpread(s.x, s.y, b, envelopeQuantile)
	}
	return trend.BinEqual(s.x, s.y, b, r)
}

// levels bins the series as reduce does, by median: the bins' typical
// level, for the curvature test. The median of a bin's samples varies about
// a third as much as its minimum under white noise, so a bend shows with
// far less data; nil when reduce does not bin (each point is its own bin)
// or takes the envelope per GC cycle.
func (s *series) levels(r trend.Reduce, quantum float64) *trend.Binned {
	if r != trend.ByMin {
		return nil
	}
	if s.cycles(quantum) != nil {
		return nil
	}
	b := binCount(len(s.x), s.seconds())
	if b == len(s.x) {
		return nil
	}
	m := trend.BinEqual(s.x, s.y, b, trend.ByMedian)
	return &m
}

// jumps counts the series' sudden moves, sample to sample, by more than
// dropSigmas robust SDs of the changes (and dropQuanta quanta): ups and
// downs, how far the ups climbed and the downs fell in all.
func (s *series) jumps(quantum float64) (ups, downs int, climbed, fell float64) {
	if len(s.y) < 3 {
		return 0, 0, 0, 0
	}
	d, med, limit := s.changes(quantum)
	for _, v := range d {
		switch {
		case v-med > limit:
			ups++
			climbed += v
		case v-med < -limit:
			downs++
			fell -= v
		}
	}
	return ups, downs, climbed, fell
}

// changes returns the series' changes sample to sample, their median, and
// the size that makes a change sudden: dropSigmas robust SDs of the
// changes, and at least dropQuanta quanta.
func (s *series) changes(quantum float64) (d []float64, med, limit float64) {
	n := len(s.y)
	d = make([]float64, n-1)
	for i := 1; i < n; i++ {
		d[i-1] = s.y[i] - s.y[i-1]
	}
	abs := make([]float64, len(d))
	copy(abs, d)
	med = trend.MedianFast(abs)
	for i, v := range d {
		abs[i] = math.Abs(v - med)
	}
	return d, med, math.Max(dropSigmas*1.4826*trend.MedianFast(abs), dropQuanta*quantum)
}

// A GC sawtooth whose cycle is longer than a bin leaves bins without a
// trough, and their minima climb with the heap between collections: the
// envelope then draws the sawtooth, not the live heap. Fast runs (a GC
// every second or two at 30 000 req/s) and slow cycles (a Go server idling
// between forced GCs every 2 min, a JVM's old generation) both do it. So
// when the series falls in sudden drops, the envelope is taken per cycle:
// the lowest point between one drop and the next is that cycle's trough.
const (
	dropSigmas = 6 // a drop is a fall this many robust SDs of the changes
	dropQuanta = 16
	minCycles  = 6
)

// cycles returns the first index of each cycle (after each drop), or nil
// when the series does not fall in at least minCycles drops.
func (s *series) cycles(quantum float64) []int {
	n := len(s.y)
	if n < 3*minCycles {
		return nil
	}
	d, _, limit := s.changes(quantum)
	starts := drops(d, limit)
	if len(starts) < minCycles {
		return nil
	}
	return starts
}

// drops returns the index after each fall of the changes d by more than
// limit that is not the edge of a one-sample spike (see spike): a fall
// that an outlier makes coming back or going out (heavy-tailed noise, a
// burst's pages mapped and unmapped) is not a collection, after which the
// heap climbs again gradually, from below where it was. Without this,
// Student-t noise (3 dof) put 5–32 % of trendless runs on a per-cycle
// envelope of a few points, whose slopes spread 2–7× as much as the
// bins' (docs/verdict-study.md, "Spikes are not cycles").
func drops(d []float64, limit float64) []int {
	var out []int
	for i, v := range d {
		if v >= -limit || spike(d, i-1, limit) || spike(d, i, limit) {
			continue
		}
		out = append(out, i+1)
	}
	return out
}

// spike: the sample after change i of d is a one-sample spike, changes i
// and i+1 both past limit in opposite directions and together within it
// (the series comes back to where it was). A fast sawtooth's trough (a
// collection, then a cycle of two or three samples climbing back) does
// not come back all the way in one sample.
func spike(d []float64, i int, limit float64) bool {
	if i < 0 || i+1 >= len(d) {
		return false
	}
	a, b := d[i], d[i+1]
	return math.Abs(a) > limit && math.Abs(b) > limit && a*b < 0 && math.Abs(a+b) < limit
}

// byCycles reduces each cycle to its lowest point, grouping consecutive
// cycles into at most maxBins bins of equal cycle counts. The stretch
// before the first drop is left out: it starts mid-cycle, and its lowest
// point is its first, not a trough.
func (s *series) byCycles(starts []int) trend.Binned {
	bounds := append(append([]int{}, starts...), len(s.y))
	cyc := len(bounds) - 1
	groups := min(cyc, maxBins)
	var out trend.Binned
	for g := range groups {
		from, to := bounds[g*cyc/groups], bounds[(g+1)*cyc/groups]
		m := from
		for i := from + 1; i < to; i++ {
			if s.y[i] < s.y[m] {
				m = i
			}
		}
		out.X, out.Y, out.N = append(out.X, s.x[m]), append(out.Y, s.y[m]), append(out.N, to-from)
	}
	return out
}
