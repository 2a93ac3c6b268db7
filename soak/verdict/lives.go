package verdict

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/soakd/soakd/soak/trend"
)

// Recycling: a supervisor that restarts a leaking child, or a prefork
// master that replaces each worker after N requests, keeps the tree's
// total bounded (a sawtooth) while every process grows. The lives check
// fits each process over its own life instead (docs/verdict-study.md,
// the recycled models and "Limits").
//
// Each life's growth rate is the Theil–Sen slope of its value against the
// soak's requests over the last two thirds of its soak samples from the
// last one before its value first changed (that third holds its own
// start-up: imports, pools, a cache that fills; a worker that idles
// before it serves starts up when it serves), and
// the growth it carried is that rate times the requests served while it
// lived within the soak. Requests, not time: a leak grows with the
// requests served, and on a busy machine the load lurches and stalls, so
// that a life's growth against time is no straight line and the lives of
// one run serve 2–3× different numbers of requests. Their sum
// over every life, divided by the requests the soak served, is the
// per-request leak the processes carried: a worker that served n requests
// leaking L each grew L·n, and the workers together served them all. Its
// uncertainty comes from a bootstrap over lives (resampling whole
// processes, livesBoot times, seeded by the data so that a report is
// reproducible).
//
// Two parts of the lives' requests are not in their fits, and each would
// bias the sum low (a starved run's fds read 0.038 fds/request against a
// truth of 0.1 when 2 of 9 lives were too short to fit):
//   - a life's span runs from its first sample to its last, but it was
//     born somewhere between the sample before and its first, and died
//     between its last and the next: half of each of those intervals'
//     requests, on average, are added to its span (edges);
//   - a life with too few samples to fit (minLifePoints) carried growth
//     too: it is given the fitted replaced lives' growth per request of
//     their spans (a ratio estimator), times its own span and edges.
//     Only the replaced lives set that ratio: the root, which is never
//     replaced and serves nothing in a prefork tree, is not the kind of
//     life that is too short to fit.
type livesFit struct {
	lives, replaced int
	perRequest      float64
	lo, hi, p       float64
	// The median life: the growth it carried over its own level at its
	// first soak sample, and the seconds it lived within the soak.
	grownShare, lifeSeconds float64
}

const (
	maxLifeBins   = 128
	minLifePoints = 4
	minLives      = 5
	livesBoot     = 2000
)

// fitLives measures the growth the lives carried over a soak that served
// requests between its first and last sample at soakStart and soakEnd
// seconds. ok is false when there are too few lives to say anything.
func fitLives(lives [][]Point, requests, soakStart float64) (livesFit, bool) {
	var carried []float64
	lf := livesFit{}
	for _, l := range lives {
		if sec, _, _ := lifeSoak(l); len(sec) >= minLifePoints && sec[0] > soakStart {
			lf.replaced++
		}
	}
	if lf.replaced == 0 {
		// Nothing was replaced: there is no growth that recycling could
		// have hidden, and the check would be wasted.
		return lf, false
	}
	soakEnd := math.Inf(-1)
	for _, l := range lives {
		if sec, _, _ := lifeSoak(l); len(sec) > 0 {
			soakEnd = math.Max(soakEnd, sec[len(sec)-1])
		}
	}
	ticks := sampleTicks(lives)
	var typical []lifeSize
	var fitC, fitSpan, unfit float64 // the replaced fitted lives' growth and spans; the unfitted lives' spans
	for _, l := range lives {
		sec, req, val := lifeSoak(l)
		if len(sec) == 0 {
			continue
		}
		span := servedSpan(sec, req, val, ticks, soakStart, soakEnd)
		if len(sec) < minLifePoints {
			unfit += span
			continue
		}
		from := serving(val)
		from += (len(sec) - from) / 3
		x, y := req[from:], val[from:]
		if len(x) > maxLifeBins {
			// Theil–Sen takes every pair: a life of 38 000 samples
			// (one process over a whole run) would take 5 GB. Its
			// bins' medians keep the slope.
			b := trend.BinEqual(x, y, maxLifeBins, trend.ByMedian)
			x, y = b.X, b.Y
		}
		t := trend.TheilSen(x, y)
		if t.Pairs == 0 {
			unfit += span
			continue
		}
		c := t.Slope * span
		carried = append(carried, c)
		if sec[0] > soakStart {
			fitC, fitSpan = fitC+c, fitSpan+span
		}
		typical = append(typical, lifeSize{share: c / val[0], seconds: sec[len(sec)-1] - sec[0],
			replaced: sec[0] > soakStart, ended: sec[len(sec)-1] < soakEnd, sized: val[0] > 0})
	}
	lf.lives = len(carried)
	lf.grownShare, lf.lifeSeconds = typicalLife(typical)
	if lf.lives < minLives || requests <= 0 {
		return lf, false
	}
	if unfit > 0 && fitSpan > 0 {
		carried = append(carried, fitC/fitSpan*unfit)
	}
	total := sum(carried)
	se := bootSE(carried)
	lf.perRequest = total / requests
	lf.lo, lf.hi = (total-1.96*se)/requests, (total+1.96*se)/requests
	lf.p = 1
	if se > 0 {
		lf.p = 0.5 * math.Erfc(total/se/math.Sqrt2)
	} else if total > 0 {
		lf.p = 0
	}
	return lf, true
}

// serving is the index of a life's last soak sample before its value
// first changed: a new prefork worker in a closed loop idles, exactly
// flat, until a connection comes to it, and its start-up comes after.
func serving(val []float64) int {
	for i := 1; i < len(val); i++ {
		if val[i] != val[0] {
			return i - 1
		}
	}
	return 0
}

// lifeSize is one life's growth as a share of its size at its first soak
// sample, and the seconds it lived within the soak; replaced when it was
// born during the soak, ended when it died before the soak's end, sized
// when its first reading was above zero.
type lifeSize struct {
	share, seconds         float64
	replaced, ended, sized bool
}

// typicalLife is the median share and duration of the lives that were
// replaced or ended within the soak, leaving out the processes that span
// it (the root, which is never replaced and may not grow at all, and any
// worker that was never replaced): in a run that holds only a few
// replacements they weigh on the median as much as the lives that were
// replaced (a supervisor restarting its child every 20 s holds, in a 90 s
// soak, its root, 3 whole lives and 2 cut by the soak's ends). Without
// such a life, every life.
func typicalLife(lives []lifeSize) (share, seconds float64) {
	for _, keep := range []func(lifeSize) bool{
		func(l lifeSize) bool { return l.replaced || l.ended },
		func(lifeSize) bool { return true },
	} {
		var shares, durations []float64
		for _, l := range lives {
			if !keep(l) {
				continue
			}
			durations = append(durations, l.seconds)
			if l.sized {
				shares = append(shares, l.share)
			}
		}
		if len(durations) == 0 {
			continue
		}
		if len(shares) > 0 {
			share = trend.Median(shares)
		}
		return share, trend.Median(durations)
	}
	return 0, 0
}

// lifeSoak returns a life's soak samples' seconds, requests and values,
// sorted by time.
func lifeSoak(l []Point) ([]float64, []float64, []float64) {
	var sec, req, val []float64
	for _, p := range l {
		if p.Phase == Soak && finitePoint(p) {
			sec, req, val = append(sec, p.Seconds), append(req, p.Requests), append(val, p.Value)
		}
	}
	idx := make([]int, len(sec))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return sec[idx[a]] < sec[idx[b]] })
	s, q, v := make([]float64, len(idx)), make([]float64, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		s[k], q[k], v[k] = sec[i], req[i], val[i]
	}
	return s, q, v
}

// ticks are the tree's sample times within the soak, with the requests
// at each, in order.
type ticks struct{ sec, req []float64 }

// sampleTicks gathers the sample times of every life: each sample reads
// every process of the tree, so together they are the tree's samples.
func sampleTicks(lives [][]Point) ticks {
	at := map[float64]float64{}
	for _, l := range lives {
		for _, p := range l {
			if p.Phase == Soak && finitePoint(p) {
				at[p.Seconds] = p.Requests
			}
		}
	}
	var t ticks
	for s := range at {
		t.sec = append(t.sec, s)
	}
	sort.Float64s(t.sec)
	for _, s := range t.sec {
		t.req = append(t.req, at[s])
	}
	return t
}

// edges are the requests a life most likely served outside its samples:
// half of the tree's requests between the sample before its first and
// its first, when it was born within the soak, and half of those between
// its last and the next, when it died within it.
func (t ticks) edges(first, last, soakStart, soakEnd float64) float64 {
	var e float64
	if i := sort.SearchFloat64s(t.sec, first); first > soakStart && i > 0 && i < len(t.sec) {
		e += (t.req[i] - t.req[i-1]) / 2
	}
	if i := sort.SearchFloat64s(t.sec, last); last < soakEnd && i+1 < len(t.sec) && t.sec[i] == last {
		e += (t.req[i+1] - t.req[i]) / 2
	}
	return math.Max(e, 0)
}

// servedSpan is the tree's requests over which a life served: from its
// first sample to its last, with its edges (ticks.edges), or, for a life
// that idled (exactly flat) before it served, from the middle of the
// interval in which its value first changed (see serving): it grew
// nothing while it idled, and its slope, fitted after, would carry over
// the idle requests what it never grew (the busy prefork study read
// 1.27 times the truth that way).
func servedSpan(sec, req, val []float64, t ticks, soakStart, soakEnd float64) float64 {
	last := len(req) - 1
	if sv := serving(val); sv > 0 {
		return req[last] - (req[sv]+req[sv+1])/2 + t.edges(math.Inf(-1), sec[last], soakStart, soakEnd)
	}
	return req[last] - req[0] + t.edges(sec[0], sec[last], soakStart, soakEnd)
}

// bootSE is the bootstrap standard error of the sum of v, resampling its
// elements with replacement.
func bootSE(v []float64) float64 {
	seed := math.Float64bits(sum(v)) ^ uint64(len(v))
	rng := rand.New(rand.NewPCG(seed, 0x11fe))
	var m, m2 float64
	for range livesBoot {
		var s float64
		for range v {
			s += v[rng.IntN(len(v))]
		}
		m += s
		m2 += s * s
	}
	m /= livesBoot
	return math.Sqrt(math.Max(m2/livesBoot-m*m, 0))
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// soakSpan is the requests served during the soak, over every
// incarnation, and the soak's first second.
func soakSpan(pts []Point) (float64, float64) {
	lo, hi, start := math.Inf(1), math.Inf(-1), math.Inf(1)
	for _, p := range pts {
		if p.Phase == Soak && finitePoint(p) {
			lo, hi = math.Min(lo, p.Requests), math.Max(hi, p.Requests)
			start = math.Min(start, p.Seconds)
		}
	}
	if math.IsInf(lo, 0) {
		return 0, 0
	}
	return hi - lo, start
}
