package verdict

import (
	"math/rand/v2"
	"testing"

	"github.com/soakd/soakd/soak/trend"
)

// synth is one synthetic series with its truth.
type synth struct {
	pts   []Point
	opt   ResourceOptions
	slope float64 // true per-request slope of the lower envelope
}

// makeSeries builds series number i of a kind; leak is per request.
func makeSeries(kind string, i uint64, leak float64) synth {
	rng := rand.New(rand.NewPCG(0x50ac, i*7919+uint64(len(kind))))
	r := randomRun(rng)
	soakReq := r.rate * r.soakSec
	opt := ResourceOptions{Name: "RSS", Unit: "bytes"}
	var m model
	switch kind {
	case "white":
		m = white(rng, leak)
	case "sawtooth":
		m = sawtooth(rng, leak, r.rate)
	case "steps":
		m = steps(rng, soakReq)
	case "restart":
		m = restart(rng, soakReq, leak)
	case "plateau-white":
		m = plateau(rng, soakReq, white(rng, 0))
	case "plateau-sawtooth":
		m = plateau(rng, soakReq, sawtooth(rng, 0, r.rate))
	case "wander":
		m = wander(rng, r.sampleSec)
	case "creep":
		m = creep(rng, soakReq)
	case "fds":
		opt = ResourceOptions{Name: "fds", Unit: "fds"}
		m = fds(rng, leak)
	}
	return synth{pts: generate(rng, r, m), opt: opt, slope: leak}
}

// tally counts verdicts over many series.
type tally struct {
	n, covered, mkAlone int
	verdicts            map[string]int
}

func (t *tally) add(res Resource, truth float64) {
	if t.verdicts == nil {
		t.verdicts = map[string]int{}
	}
	t.n++
	t.verdicts[res.Verdict]++
	if res.PValue < MemoryThresholds.Alpha {
		t.mkAlone++ // what a bare Mann–Kendall test would have flagged
	}
	if res.CI95[0] <= truth && truth <= res.CI95[1] {
		t.covered++
	}
}

func (t *tally) rate(v string) float64 { return float64(t.verdicts[v]) / float64(t.n) }
func (t *tally) coverage() float64     { return float64(t.covered) / float64(t.n) }

// sweep analyses n series of a kind, reduced by r.
func sweep(kind string, n int, leakOf func(i int) float64, r trend.Reduce) tally {
	var t tally
	for i := range n {
		s := makeSeries(kind, uint64(i), leakOf(i))
		t.add(analyze(s.pts, s.opt, r), s.slope)
	}
	return t
}

func zero(int) float64 { return 0 }

// sweepSize is n series, or a tenth of them under -race, where the bars
// are not asserted (raceBuild).
func sweepSize(t *testing.T, n int) int {
	if raceBuild {
		t.Logf("race build: %d of %d series, the bar not asserted; the README's test command runs them whole without -race", n/10, n)
		return n / 10
	}
	return n
}

// TestFalseAlarms: at most 1 % leak verdicts over 500 stable series per
// noise model.
func TestFalseAlarms(t *testing.T) {
	for _, kind := range []string{"white", "sawtooth", "steps", "restart", "wander", "creep", "fds"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env := sweep(kind, sweepSize(t, 500), zero, trend.ByMin)
			t.Logf("%s: false-alarm rate %.3f (Mann–Kendall alone: %.3f), verdicts %v",
				kind, env.rate(Leak), float64(env.mkAlone)/float64(env.n), env.verdicts)
			if got := env.rate(Leak); got > 0.01 && !raceBuild {
				t.Errorf("got false-alarm rate %.3f; want ≤ 0.01", got)
			}
		})
	}
}

// TestPlateauNeverLeak: a cache that fills then stays is never a leak.
func TestPlateauNeverLeak(t *testing.T) {
	for _, kind := range []string{"plateau-white", "plateau-sawtooth"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env := sweep(kind, sweepSize(t, 250), zero, trend.ByMin)
			t.Logf("%s: verdicts %v", kind, env.verdicts)
			if got := env.verdicts[Leak]; got != 0 {
				t.Errorf("got %d leak verdicts of %d plateaus; want 0", got, env.n)
			}
		})
	}
}

// TestCoverage: the true slope lies inside the reported 95 % interval in
// at least 90 % of leaky series.
func TestCoverage(t *testing.T) {
	tests := []struct {
		kind   string
		leakOf func(i int) float64
	}{
		{"white", func(i int) float64 { return []float64{16, 50, 200, 1000}[i%4] }},
		{"sawtooth", func(i int) float64 { return []float64{16, 50, 200, 1000}[i%4] }},
		{"restart", func(i int) float64 { return []float64{50, 200, 1000}[i%3] }},
		{"fds", func(i int) float64 { return []float64{0.002, 0.01, 0.05}[i%3] }},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			env := sweep(tc.kind, sweepSize(t, 200), tc.leakOf, trend.ByMin)
			t.Logf("%s: coverage %.3f, detected %.3f, verdicts %v", tc.kind, env.coverage(), env.rate(Leak), env.verdicts)
			if got := env.coverage(); got < 0.90 && !raceBuild {
				t.Errorf("got coverage %.3f; want ≥ 0.90", got)
			}
		})
	}
}

// TestMethodComparison backs the choice of the lower envelope over the
// bin median: on a Go heap's sawtooth the median tracks the mid-cycle
// level, which grows faster than the live heap, so its interval misses a
// leak's true slope far more often than the envelope's.
func TestMethodComparison(t *testing.T) {
	leaks := func(i int) float64 { return []float64{16, 50, 200, 1000}[i%4] }
	env := sweep("sawtooth", 100, leaks, trend.ByMin)
	med := sweep("sawtooth", 100, leaks, trend.ByMedian)
	t.Logf("sawtooth leaks: coverage %.2f by the envelope, %.2f by the bin median", env.coverage(), med.coverage())
	// Measured: 1.00 and 0.72 with issue 22's intervals alone, 1.00 and
	// 0.82 with its decision rules too (more of the median's fits are
	// leaks, whose reported interval also spans the second half's).
	if env.coverage() < 0.9 || med.coverage() > env.coverage()-0.15 {
		t.Errorf("got coverage %.2f (envelope) and %.2f (median); want the envelope ≥ 0.90 and 0.15 or more above the median", env.coverage(), med.coverage())
	}
}
