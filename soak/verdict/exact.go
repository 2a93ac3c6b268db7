package verdict

import (
	"math"

	"github.com/soakd/soakd/soak/trend"
)

// methodExact names the verdict a quantised series' own readings
// decided (see exactBound), where the fit's interval did not.
const methodExact = "exact-count"

// Exact is what the readings of a quantised resource prove by
// themselves (see exactBound): the report's "resources.<name>.exact"
// object, set when it decided the verdict.
type Exact struct {
	// Gained is the units the soak gained from its start level to its
	// end level (a multiple of the quantum), Lost those it gave back
	// (one of them is 0), over Over requests; the interval's ends are
	// one quantum more over them.
	Gained float64 `json:"gained"`
	Lost   float64 `json:"lost"`
	Over   float64 `json:"over_requests"`
	// Levels is the number of distinct readings in the soak.
	Levels int `json:"levels"`
}

// exactBound is what a series of readings that are whole quanta proves
// without a model of its noise: a count that did not move has none.
//
// The model: reading = base + net + churn, in whole quanta, where net
// is what the soak added (a leak, less what was given back) and churn is
// ≥ 0 and back at 0 now and then (connections, a pool that grows and
// shrinks). The start level m1 is the lowest reading over the soak's
// first third, at its first index i1, and the end level m2 the lowest
// over its last third, at its last index i2; the churn is taken to be 0
// at both. The net then changed by m2 − m1 between them, and a steady
// slope is under that plus one quantum over the requests between them
// (one quantum: a slope that adds less than one between two readings
// may add none); the lower end is the same for a fall.
//
// Only the start and the end levels are compared. The least bound over
// the levels between (the last reading at or under m1 + g quanta, for
// g = 0, 1, …, each bound valid for a steady slope) reads a leak that
// strikes at random requests at k times the floor as stable whenever its
// first unit comes late, e^(−k) of the time at any soak length (22 % at
// 1.5×); between the ends, a longer soak holds such a leak back
// (docs/verdict-study.md, "Exact counts").
//
// It is a bound on what the integers prove, not a 95 % confidence
// interval: a random leak at k times the bound leaves no unit over the
// bound's span with probability e^(−k).
type exactBound struct {
	lo, hi float64 // per request
	Exact
}

// maxExactLevels is the most distinct readings a memory series (quantum
// above 1) may hold for exactBound: a heap that touches a page now and
// then and gives it back. Counts take any number (churn is the model's).
// Chosen by measurement (docs/verdict-study.md, "Exact counts").
const maxExactLevels = 8

// exactOf returns the bound on s's slope that its readings prove, and
// whether s qualifies: every reading a whole number of quanta (q), and
// for memory (q > 1) no more than maxExactLevels distinct readings.
func exactOf(s *series, q float64) (exactBound, bool) {
	n := len(s.y)
	if n < minSoakPoints || q <= 0 || s.span() <= 0 {
		return exactBound{}, false
	}
	levels := map[float64]bool{}
	for _, v := range s.y {
		if k := v / q; math.Abs(k-math.Round(k)) > 1e-9 || math.IsNaN(k) {
			return exactBound{}, false
		}
		levels[v] = true
	}
	if q > 1 && len(levels) > maxExactLevels {
		return exactBound{}, false
	}
	k := max(1, n/3)
	i1, i2 := 0, n-1
	for i := range k {
		if s.y[i] < s.y[i1] {
			i1 = i
		}
		if j := n - 1 - i; s.y[j] < s.y[i2] {
			i2 = j
		}
	}
	over := s.x[i2] - s.x[i1]
	if over <= 0 {
		return exactBound{}, false
	}
	net := s.y[i2] - s.y[i1]
	e := exactBound{Exact: Exact{Levels: len(levels), Gained: math.Max(net, 0), Lost: math.Max(-net, 0), Over: over}}
	e.hi, e.lo = (e.Gained+q)/over, -(e.Lost+q)/over
	return e, true
}

// fit is the bound as a trend.Fit with the estimate e.slope clamped into
// it.
func (e exactBound) fit(slope float64) trend.Fit {
	return trend.Fit{Slope: math.Min(math.Max(slope, e.lo), e.hi), Lo: e.lo, Hi: e.hi}
}

// more is the extra requests after which the bound's upper end lies
// under v if the readings stay as they are: its quanta over v, less the
// requests it already spans.
func (e exactBound) more(v, q float64) float64 {
	if v <= 0 {
		return math.Inf(1)
	}
	return math.Max((e.Gained+q)/v-e.Over, 0)
}

// exactDecides: a decision the fit's interval left open because it is too
// wide (whyWide, whyNoisy) is the kind the readings' own bound may
// settle. Every other (a leak, growth that clears a floor, a shape) is
// the fit's: the bound never calls a leak.
func exactDecides(d decision) bool {
	return d.verdict == Inconclusive && (d.why == whyWide || d.why == whyNoisy)
}
