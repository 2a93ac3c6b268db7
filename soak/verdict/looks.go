package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/soakd/soakd/soak/trend"
)

// An until-decided run (soakd run --until-decided) analyses its soak at
// planned looks and stops at the first that decides every part. Asking
// the same question at many looks spends its error rate at each: a test
// that calls 1 run in 1 000 a leak at one look calls more at twenty. So
// the looks are planned before the data (a Schedule) and each spends a
// share of the run's budget (Bonferroni: the shares sum to 1 over every
// look the run could take, whenever it stops; half of it is the last
// look's, see LastLookShare): look k tests growth at
// Alpha × share and reads the whole soak's interval, which both the
// leak's floor and the equivalence test of stable read, at the level
// 1 − (1 − DefaultLevel) × share. The errors of all the looks together are
// then at most the single analysis's: false leaks at most Alpha beyond
// what the floor's own one-sided 2.5 % allows, a false stable or plateau
// at most 2.5 % a side over every look. The study measured them far under
// that (docs/verdict-study.md, "Until decided").

// DefaultLevel is the confidence of the whole-soak interval of a single
// analysis (Thresholds.Level's zero value).
const DefaultLevel = 0.95

// Look schedule defaults: the first look after FirstLookSeconds of soak,
// each later one at least LookRatio times the soak of the one before.
const (
	FirstLookSeconds = 30
	LookRatio        = 1.25
)

// Schedule is the looks of an until-decided run: At holds each look's
// progress through the soak's most (its share of the soak the run may
// take, by time or requests), ascending, the last 1: the run's end.
type Schedule struct {
	At []float64
}

// NewSchedule plans the looks from the first, at progress first (0 <
// first ≤ 1; the soak's share reached after FirstLookSeconds), to the
// end: spaced evenly in log progress, each at least ratio times the one
// before (LookRatio when ratio ≤ 1), as many as that allows. A first
// look at or past 1/ratio leaves the end alone.
func NewSchedule(first, ratio float64) Schedule {
	if ratio <= 1 {
		ratio = LookRatio
	}
	if !(first > 0) || first >= 1/ratio {
		return Schedule{At: []float64{1}}
	}
	gaps := int(math.Floor(math.Log(1/first) / math.Log(ratio)))
	at := make([]float64, gaps+1)
	for k := range at {
		at[k] = math.Pow(first, 1-float64(k)/float64(gaps))
	}
	at[gaps] = 1
	return Schedule{At: at}
}

// Looks is the number of looks planned.
func (s Schedule) Looks() int { return len(s.At) }

// LastLookShare is the last look's share of the run's error budget: a
// run that reaches its most is judged nearly as one analysis of its soak
// would be (its interval at 97.5 %), and the earlier looks share the
// other half. With every look's share the same, a trendless 2 h run read
// stable at its end in 169 of 200 runs against 193 for one analysis; with
// half at the end, in 189 (docs/verdict-study.md, "Until decided").
const LastLookShare = 0.5

// Share is look k's share of the run's error budget (k counts from 0):
// LastLookShare for the last, the rest evenly between the others; 1 for
// a plan of one look.
func (s Schedule) Share(k int) float64 {
	n := len(s.At)
	switch {
	case n <= 1:
		return 1
	case k == n-1:
		return LastLookShare
	}
	return (1 - LastLookShare) / float64(n-1)
}

// Due says whether look k is due at progress p.
func (s Schedule) Due(k int, p float64) bool { return k < len(s.At) && p >= s.At[k] }

// Spent is t at a look that spends share of the run's budget: Alpha
// times share, and the whole soak's interval at 1 − (1 − Level) × share.
// A share of 1 (or ≤ 0) is t itself.
func (t Thresholds) Spent(share float64) Thresholds {
	if !(share > 0) || share >= 1 {
		return t
	}
	a := t.Alpha
	if a <= 0 {
		a = MemoryThresholds.Alpha
	}
	t.Alpha = a * share
	t.Level = 1 - (1-t.level())*share
	return t
}

// level is the confidence of the whole soak's interval: Level, or
// DefaultLevel when unset.
func (t Thresholds) level() float64 {
	if t.Level > 0 && t.Level < 1 {
		return t.Level
	}
	return DefaultLevel
}

// atLevel is f with its whole-soak interval at the confidence level
// (the leak's floor and the equivalence test read it), and the slope's
// p-value, which Alpha judges, taken from that interval so that the two
// agree (slopePAt); a p from the sign test stays. Before issue 41 p
// stayed the 95 % interval's: at a look's 99.9 % it stood on the other
// side of (1 − level)/2 from the interval in 5 of 350 study runs.
func (f fit) atLevel(level float64) fit {
	if level == DefaultLevel || len(f.b.X) < 2 {
		return f
	}
	f.whole = widen(trend.TheilSenInflated(f.b.X, f.b.Y, level, f.vif), f.quantum/f.span)
	if f.signMoves == 0 {
		f.p = slopePAt(f.whole, level)
	}
	return f
}

// relevel words the whole soak's interval in a reason at its level, when
// that is not 95 %: "(99.86 % CI …)".
func relevel(reason string, level float64) string {
	if level == DefaultLevel {
		return reason
	}
	return strings.Replace(reason, "(95 % CI ", fmt.Sprintf("(%.4g %% CI ", 100*level), 1)
}
