package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestExactOf: the readings' own bound on a quantised series, by hand,
// and which series qualify.
func TestExactOf(t *testing.T) {
	s := &series{x: []float64{0, 100, 200, 300, 400, 500, 600, 700, 800, 900}}
	s.sec = s.x
	for _, c := range []struct {
		name   string
		y      []float64
		lo, hi float64
	}{
		{"flat", []float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, -1.0 / 900, 1.0 / 900},
		{"churn up and back", []float64{5, 7, 5, 6, 9, 5, 6, 5, 8, 5}, -1.0 / 900, 1.0 / 900},
		// the end level is the last third's lowest, at its last index
		{"churn, not back at the end", []float64{5, 7, 5, 6, 9, 5, 6, 5, 8, 6}, -1.0 / 700, 1.0 / 700},
		// the start level is the first third's lowest, at its first index
		{"start above its level", []float64{7, 5, 5, 5, 5, 5, 5, 5, 5, 5}, -1.0 / 800, 1.0 / 800},
		{"one step", []float64{5, 5, 5, 5, 5, 6, 6, 6, 6, 6}, -1.0 / 900, 2.0 / 900},
		// a fall of one (a stale fd closed): none gained
		{"one fall", []float64{6, 6, 6, 6, 6, 5, 5, 5, 5, 5}, -2.0 / 900, 1.0 / 900},
		// a steady leak of 1 per 100: never under its rate
		{"steady", []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, -1.0 / 700, 8.0 / 700},
		{"falling", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, -8.0 / 700, 1.0 / 700},
	} {
		s.y = c.y
		e, ok := exactOf(s, 1)
		if !ok || math.Abs(e.lo-c.lo) > 1e-12 || math.Abs(e.hi-c.hi) > 1e-12 {
			t.Errorf("%s: got %.4g–%.4g (%+v, ok %v); want %.4g–%.4g", c.name, e.lo, e.hi, e.Exact, ok, c.lo, c.hi)
		}
	}
	s.y = []float64{5, 5, 5.5, 5, 5, 5, 5, 5, 5, 5}
	if _, ok := exactOf(s, 1); ok {
		t.Error("a reading of 5.5 fds qualified; want only whole quanta")
	}
	s.y = make([]float64, 10)
	for i := range s.y {
		s.y[i] = float64(100+i%3) * 4096
	}
	if _, ok := exactOf(s, 4096); !ok {
		t.Error("3 page levels did not qualify")
	}
	for i := range s.y {
		s.y[i] = float64(100+i) * 4096
	}
	if _, ok := exactOf(s, 4096); ok {
		t.Errorf("10 page levels qualified; want at most %d", maxExactLevels)
	}
}

// countRun is a count at 1000 req/s sampled every 0.5 s over soakSec
// (a 10 % warm-up before it): base, plus churn that swings slowly (0–6
// connections open, following a 40 s swing of random phase, back to 0 at
// its trough), plus a leak of leak
// units a request, one unit at a time, steadily. The slow swing is wander to
// the fit, which cannot tell it from a slope over a short soak.
func countRun(rng *rand.Rand, soakSec, leak float64) []Point { return swingRun(rng, soakSec, leak, 40) }

// swingRun is countRun with a swing of period seconds.
func swingRun(rng *rand.Rand, soakSec, leak, period float64) []Point {
	var pts []Point
	base, req, soak0 := 12.0, 0.0, 0.0
	warm := soakSec / 9
	phase := rng.Float64() * 2 * math.Pi
	for t := 0.0; t <= warm+soakSec; t += 0.5 {
		n := 500.0
		ph := Soak
		if t < warm {
			ph, soak0 = Warmup, req+n
		}
		req += n
		leaked := math.Floor(math.Max(req-soak0, 0) * leak)
		churn := math.Round(3 + 3*math.Sin(2*math.Pi*t/period+phase))
		pts = append(pts, Point{Requests: req, Seconds: t, Value: base + leaked + churn, Phase: ph})
	}
	return pts
}

// TestExactCountStable: a flat count with churn reads stable by its
// readings once it has run about 1/floor requests (86.4 s at any
// throughput under 1000 per 24 h), which the fit alone does not; a
// count that gains steadily at 1.2 times the floor never does (one
// that gains at random requests can: the study measures how often); and short of
// the length the advice names about the requests the bound still needs
// (with a 10 s swing: each third of the soak sees its trough).
// The churn's slow swing keeps the fit's interval too wide to decide.
func TestExactCountStable(t *testing.T) {
	opt := ResourceOptions{Name: "fds", Unit: "fds"}
	floor := 1000 / (1000 * 86400.0) // per request at 1000 req/s
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 40))
		r := AnalyzeResource(countRun(rng, 200, 0), opt)
		if r.Verdict != Stable || r.Method != methodExact || r.Exact == nil {
			t.Fatalf("seed %d: flat with churn over 200 s: got %s (%s); want stable by exact-count", seed, r.Verdict, r.Reason)
		}
		if r.CI95[1] >= floor || r.CI95[0] <= -floor || !strings.Contains(r.Reason, "exact") {
			t.Errorf("seed %d: got CI %.3g–%.3g, %q; want within ±%.3g and the reason to say exact", seed, r.CI95[0], r.CI95[1], r.Reason, floor)
		}
		if r.BoundPerDay <= 0 || r.BoundPerDay >= 1000 {
			t.Errorf("seed %d: bound per day %g; want in (0, 1000)", seed, r.BoundPerDay)
		}
		if r.PTest != PTestFitted {
			t.Errorf("seed %d: p_test %q; want %q (p_value is the fit's, ci95 the exact bound)", seed, r.PTest, PTestFitted)
		}
		short := AnalyzeResource(swingRun(rng, 70, 0, 10), opt)
		if short.Verdict != Inconclusive {
			t.Errorf("seed %d: flat over 70 s: got %s; want inconclusive (under 86.4 s)", seed, short.Verdict)
		} else if sec := short.SettleRequests / 1000; sec > 86.4 {
			t.Errorf("seed %d: flat over 70 s: advice %q (%.0f s; %s); want what the bound still needs, under 86.4 s", seed, short.Settle, sec, short.Reason)
		}
		for _, sec := range []float64{100, 200, 400} {
			if r := AnalyzeResource(countRun(rng, sec, 1.2*floor), opt); r.Verdict == Stable {
				t.Errorf("seed %d: a steady leak at 1.2× the floor over %.0f s read stable: %s", seed, sec, r.Reason)
			}
		}
	}
}
