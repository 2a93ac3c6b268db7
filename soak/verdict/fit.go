package verdict

import (
	"math"
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// keepFraction: growth "continues" in the last third when its slope is at
// least this fraction of the whole soak's, and has "flattened" when the
// last third's upper confidence bound is below this fraction (or below
// the per-request floor).
const keepFraction = 0.5

// fit is the trend of one incarnation's soak.
type fit struct {
	whole, last trend.Fit
	mk, lastMK  trend.MK
	headMK      trend.MK // the first two thirds
	span        float64  // requests covered
	seconds     float64  // seconds covered
	start, end  float64  // reduced level at the soak's start and end
	current     float64  // the last soak sample
	endSec      float64  // seconds at the last soak sample
}

// fitSeries fits the binned series, reduced by r.
func fitSeries(s *series, r trend.Reduce) fit {
	b := s.reduce(r)
	f := fit{
		whole:   trend.TheilSen(b.X, b.Y),
		mk:      trend.MannKendall(b.X, b.Y),
		span:    s.span(),
		seconds: s.sec[len(s.sec)-1] - s.sec[0],
		current: s.y[len(s.y)-1],
		endSec:  s.sec[len(s.sec)-1],
	}
	cut := s.x[0] + 2*f.span/3
	i := sort.SearchFloat64s(b.X, cut)
	f.last = trend.TheilSen(b.X[i:], b.Y[i:])
	f.lastMK = trend.MannKendall(b.X[i:], b.Y[i:])
	f.headMK = trend.MannKendall(b.X[:i], b.Y[:i])
	f.whole = widen(f.whole, quantum(s.y)/f.span)
	f.last = widen(f.last, 3*quantum(s.y)/f.span)
	k := max(1, min(5, len(b.Y)/20))
	f.start, f.end = trend.Median(b.Y[:k]), trend.Median(b.Y[len(b.Y)-k:])
	return f
}

// widen adds w to each side of a fit's interval.
func widen(t trend.Fit, w float64) trend.Fit {
	if w > 0 && !math.IsInf(w, 0) {
		t.Lo, t.Hi = t.Lo-w, t.Hi+w
	}
	return t
}

// quantum is the data's resolution: the greatest common divisor of the
// first quantumSample values when they are whole numbers (a 4 KiB page
// for RSS, 1 for fds), else 0. Rounding to it is not random noise, so the
// slope's interval is widened by one quantum over the fitted span: no
// slope is known finer than that.
func quantum(v []float64) float64 {
	var g uint64
	for _, x := range v[:min(len(v), quantumSample)] {
		a := math.Abs(x)
		if a != math.Trunc(a) || a >= 1<<53 {
			return 0
		}
		g = gcd(g, uint64(a))
	}
	return float64(g)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// quantumSample bounds the values quantum reads.
const quantumSample = 1 << 12

// fittedGrowth is the slope times the requests covered.
func (f fit) fittedGrowth() float64 { return f.whole.Slope * f.span }

// significant: a one-sided increasing trend at level alpha.
func (f fit) significant(alpha float64) bool { return f.mk.PIncrease < alpha }

// grew: a significant increase over the soak or over its first two
// thirds (a long flat tail dilutes the whole soak's Mann–Kendall S).
func (f fit) grew(alpha float64) bool {
	return f.significant(alpha) || f.headMK.PIncrease < alpha
}

// continued: the last third still climbs at a good fraction of the whole
// soak's slope, and climbs on its own (one-sided Mann–Kendall p below
// lastAlpha).
func (f fit) continued() bool {
	return f.last.Slope >= keepFraction*f.whole.Slope && f.lastMK.PIncrease < lastAlpha
}

// lastAlpha is the significance the last third's own climb needs.
const lastAlpha = 0.05

// flattened: the last third is confidently slower than half the whole
// soak, or than the per-request floor (a long flat tail can pull the
// whole soak's median slope down to the floor or to zero).
func (f fit) flattened(floor float64) bool {
	return f.last.Hi < math.Max(keepFraction*f.whole.Slope, floor)
}

// halfWidth is half the whole-soak confidence interval.
func (f fit) halfWidth() float64 { return (f.whole.Hi - f.whole.Lo) / 2 }

// moreRequests estimates the extra requests after which an interval of
// half-width h shrinks to need. With a fixed sampling rate the half-width
// of a slope falls as span^(−3/2) (√n more points over an n-times longer
// lever), so the span must grow by (h/need)^(2/3).
func moreRequests(span, h, need float64) float64 {
	if need <= 0 || h <= need {
		need = h / 2
	}
	grow := math.Pow(h/need, 2.0/3)
	return span * math.Min(grow-1, 100)
}

// released reports whether the cool-down gave the growth back: the lower
// envelope over the cool-down's second half (its minimum) fell to within
// releaseFraction of the soak's growth above its start level. A Go runtime
// returns memory within minutes; glibc malloc may never. It is nil when no
// cool-down of the fitted incarnation was sampled.
func released(pts []Point, inc int, f fit) (*bool, float64, float64) {
	var sec, val []float64
	for _, p := range pts {
		if p.Phase == Cooldown && p.Incarnation == inc {
			sec, val = append(sec, p.Seconds), append(val, p.Value)
		}
	}
	if len(sec) < 2 {
		return nil, 0, 0
	}
	t0, t1 := minMax(sec)
	idle := t1 - math.Min(f.endSec, t0)
	mid := (t0 + t1) / 2
	level := math.Inf(1)
	for i, s := range sec {
		if s >= mid {
			level = math.Min(level, val[i])
		}
	}
	ok := level <= f.start+releaseFraction*math.Max(f.end-f.start, 0)
	return &ok, level, idle
}

// releaseFraction of the soak's growth may remain after a release.
const releaseFraction = 0.25

func minMax(v []float64) (float64, float64) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}
