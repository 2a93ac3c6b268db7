package compare

import (
	"math"
	"sort"

	"github.com/soakd/soakd/soak/trend"
	"github.com/soakd/soakd/soak/verdict"
)

// Point is one reading of a resource during a run's soak: at Requests
// (the run's cumulative requests) and Seconds (since the run started),
// Value in the resource's unit.
type Point struct{ Requests, Seconds, Value float64 }

// z975 is the normal quantile of a two-sided 97.5 % interval.
const z975 = 2.241402727604947

// pairedBins is the most points the paired fit keeps: the difference
// series is reduced to medians over as many equal bins of the soak.
const pairedBins = 300

// minPaired is the fewest readings each run needs for a paired fit.
const minPaired = 8

// PairedSlope is the per-request growth of the new run less the old one's,
// fitted on the difference of the two runs' readings at the same share of
// their soak's requests: Dᵢ = new(uᵢ)·R̄/R_new − old(uᵢ)·R̄/R_old at the old
// run's readings uᵢ (the new run's interpolated there), R each run's soak
// requests, against uᵢ·R̄. Its slope is the difference of the runs'
// per-request slopes. Noise the two runs share by their position in the
// soak (a run compared with itself shares all of it) cancels in D. The
// slope is Theil–Sen's with a 97.5 % interval, widened for the
// residuals' autocorrelation as a run's own fit is (trend.Lag1 and
// VarianceInflation). ok is false when either run has fewer than
// minPaired readings or no requests over them.
func PairedSlope(old, cur []Point) (d float64, ci [2]float64, ok bool) {
	if len(old) < minPaired || len(cur) < minPaired {
		return 0, ci, false
	}
	ro, rn := old[len(old)-1].Requests-old[0].Requests, cur[len(cur)-1].Requests-cur[0].Requests
	if !(ro > 0 && rn > 0) {
		return 0, ci, false
	}
	mean := (ro + rn) / 2
	x := make([]float64, 0, len(old))
	y := make([]float64, 0, len(old))
	secs := make([]float64, 0, len(old))
	for _, p := range old {
		u := (p.Requests - old[0].Requests) / ro
		v, in := at(cur, cur[0].Requests+u*rn)
		if !in {
			continue
		}
		x = append(x, u*mean)
		y = append(y, v*mean/rn-p.Value*mean/ro)
		secs = append(secs, p.Seconds)
	}
	if len(x) < minPaired {
		return 0, ci, false
	}
	if len(x) > pairedBins {
		b := trend.Bin(x, y, pairedBins, trend.ByMedian)
		s := trend.Bin(x, secs, pairedBins, trend.ByMedian)
		x, y, secs = b.X, b.Y, s.Y
	}
	pts := make([]verdict.Point, len(x))
	for i := range x {
		pts[i] = verdict.Point{Requests: x[i], Seconds: secs[i], Value: y[i], Incarnation: 1, Phase: verdict.Soak}
	}
	f := verdict.AnalyzeResource(pts, verdict.ResourceOptions{Name: "d", Unit: "bytes", Quantum: 1e-9})
	if math.IsNaN(f.CI95[0]) || math.IsNaN(f.CI95[1]) {
		return 0, ci, false
	}
	lo, hi := f.CI95[0], f.CI95[1]
	if h := f.SecondHalf; h != nil {
		// A leak's interval is the whole soak's, which a warm-up that
		// outlasted its phase tilts; the difference's interval also
		// spans the second half's, as a leak's reported interval did
		// before it was split off: with the whole soak's alone, the
		// paired 97.5 % interval held a 64 B/request difference in 170
		// of 180 simulated pairs (TestPairedSlopeCovers), with both in
		// 177.
		lo, hi = math.Min(lo, h.CI95[0]), math.Max(hi, h.CI95[1])
	}
	w := z975 / z95 // the fit's 95 % interval, widened to 97.5 %
	return f.PerRequest, [2]float64{f.PerRequest - w*(f.PerRequest-lo), f.PerRequest + w*(hi-f.PerRequest)}, true
}

// at is the value of pts (sorted by requests) at requests q, interpolated
// between its neighbours; in is false outside the readings.
func at(pts []Point, q float64) (v float64, in bool) {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].Requests >= q })
	switch {
	case i == len(pts):
		return 0, false
	case pts[i].Requests == q:
		return pts[i].Value, true
	case i == 0:
		return 0, false
	}
	a, b := pts[i-1], pts[i]
	return a.Value + (b.Value-a.Value)*(q-a.Requests)/(b.Requests-a.Requests), true
}
