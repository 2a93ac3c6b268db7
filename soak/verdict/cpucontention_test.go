package verdict

import (
	"cmp"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// contended is a synthetic soak of n cost windows over a minute: the
// machine's other work z rises from z0 to z1 cores with an AR(1)
// fluctuation of sd jitter; the cost per request is 100 µs, raised by
// slow(z) (the contention's own effect) and by rise over the soak (a
// leak), with 5 % noise.
type contended struct {
	n              int
	z0, z1, jitter float64
	slow           func(z float64) float64
	rise           float64
	// saturated: the machine is full, its other work pinned near 2 cores,
	// and z is the target's run-queue wait per CPU second instead.
	saturated bool
}

// contention is what the verdict sees of z.
func (c contended) contention(rng *rand.Rand, z []float64) Contention {
	if !c.saturated {
		return Contention{Others: z}
	}
	others := make([]float64, len(z))
	for i := range others {
		others[i] = 1.95 + 0.02*rng.NormFloat64()
	}
	return Contention{Others: others, Wait: z}
}

func (c contended) series(rng *rand.Rand) (at, cost, z []float64) {
	var ar float64
	for i := range c.n {
		f := float64(i) / float64(c.n-1)
		ar = 0.5*ar + c.jitter*math.Sqrt(0.75)*rng.NormFloat64()
		zi := max(c.z0+(c.z1-c.z0)*f+ar, 0)
		at = append(at, 60*f)
		z = append(z, zi)
		cost = append(cost, 100e-6*c.slow(zi)*(1+c.rise*f)*(1+0.05*rng.NormFloat64()))
	}
	return at, cost, z
}

// linearSlow: each core of other work costs the target 30 % more CPU per
// request (shared caches, SMT siblings, a lower clock).
func linearSlow(z float64) float64 { return 1 + 0.3*z }

// quietSlow: a ping-pong over loopback costs more on a quiet machine,
// where its client and server run on separate cores and every request
// crosses between them: 1/(1 + 0.4z), 53 % dearer at 0.3 cores of other
// work than at 1.8.
func quietSlow(z float64) float64 { return 1 / (1 + 0.4*z) }

// queueSlow grows faster as the two cores fill: 1/(1 − z/2.5).
func queueSlow(z float64) float64 { return 1 / (1 - math.Min(z, 2.2)/2.5) }

// rate is the share of 200 seeds whose cost drift is rising and
// inconclusive, and the share rising by the time-only fit (the
// contention unknown).
func rate(t *testing.T, c contended) (rising, inconclusive, timeOnly float64) {
	t.Helper()
	const seeds = 200
	var r, u, o int
	for s := range seeds {
		rng := rand.New(rand.NewPCG(uint64(s), 21))
		at, cost, z := c.series(rng)
		d := costDrift(at, cost, c.contention(rng, z))
		if d.Rising {
			r++
		}
		if d.Inconclusive {
			u++
		}
		if costDrift(at, cost, Contention{}).Rising {
			o++
		}
	}
	return float64(r) / seeds, float64(u) / seeds, float64(o) / seeds
}

// TestCostDriftUnderContention measures the false alarms of a constant
// cost under rising contention and the finds of a +50 % rise under
// constant and rising contention, over 200 seeds each.
func TestCostDriftUnderContention(t *testing.T) {
	tests := []struct {
		name string
		c    contended
		leak bool
		// minFind is the share of leaks to find; 0.9 when unset.
		minFind float64
	}{
		{name: "constant cost, contention 0.3 to 1.8 cores", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow}},
		{name: "constant cost, contention 0.3 to 1.8 cores, convex effect", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: queueSlow}},
		{name: "constant cost, contention 0.3 to 1.8 cores, 8 windows", c: contended{n: 8, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow}},
		{name: "constant cost, a steady ramp of contention", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.05, slow: linearSlow}},
		{name: "constant cost, a full machine, run-queue wait 0.3 to 1.8 s per CPU second", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow, saturated: true}},
		// The rise beyond the contention is tested with the windows'
		// wander allowed for (fitPartial), as the time-only trend is: a
		// clean cost that stepped with the contention and wandered on
		// read a CPU leak in 9–11 % of the study's quietens-mid-soak
		// seeds before, ≤ 0.5 % now. The price is paid here, where the
		// contention moved in step with the leak: 95.5 % → 87.5 % found,
		// the rest inconclusive; held to ≥ 85 %.
		{name: "+50 %, a full machine, run-queue wait 0.3 to 1.8 s per CPU second", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow, rise: 0.5, saturated: true}, leak: true, minFind: 0.85},
		// The contention's jitter is taken out of the cost before the
		// trend test (withoutContention), and what is left still wanders
		// a little: 89.5 % found, the rest inconclusive; held to ≥ 85 %.
		{name: "+50 %, constant contention", c: contended{n: 30, z0: 0.5, z1: 0.5, jitter: 0.3, slow: linearSlow, rise: 0.5}, leak: true, minFind: 0.85},
		{name: "+50 %, no other work", c: contended{n: 30, slow: linearSlow, rise: 0.5}, leak: true},
		// 95.5 % → 87.5 % found since the wander is allowed for beyond
		// the contention, the rest inconclusive; held to ≥ 85 %.
		{name: "+50 %, contention 0.3 to 1.8 cores", c: contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow, rise: 0.5}, leak: true, minFind: 0.85},
		// The machine quietens: other work falls, and a cost that is
		// dearer on a quiet machine rises with no leak (a clean C server
		// read a CPU leak of +73 % as other work fell from 1.6 to 0.66
		// cores, before a fall counted).
		{name: "constant cost, contention 1.8 to 0.3 cores, dearer on a quiet machine", c: contended{n: 30, z0: 1.8, z1: 0.3, jitter: 0.3, slow: quietSlow}},
		{name: "constant cost, a steady fall of contention, dearer on a quiet machine", c: contended{n: 30, z0: 1.8, z1: 0.3, jitter: 0.05, slow: quietSlow}},
		// A leak while the machine quietens: here the contention's own
		// effect (−29 %) hides half of a +100 % rise, and since the trend
		// test allows for wander (issue 42) 55.5 % are found, the rest
		// inconclusive, never not rising; held to ≥ 50 %.
		{name: "+100 %, contention 1.8 to 0.3 cores", c: contended{n: 30, z0: 1.8, z1: 0.3, jitter: 0.3, slow: linearSlow, rise: 1}, leak: true, minFind: 0.5},
		// Here it adds +53 % in step with the time to a +50 % rise: the
		// two are told apart only by the contention's wander. 82 % of the
		// leaks were found before the rise beyond the contention allowed
		// for the windows' wander, 64.5 % now (42.5 % with a line in the
		// contention alone: its level bins take in the curve); the rest
		// inconclusive, never stable; held to ≥ 60 % (minFind).
		{name: "+50 %, contention 1.8 to 0.3 cores, dearer on a quiet machine", c: contended{n: 30, z0: 1.8, z1: 0.3, jitter: 0.3, slow: quietSlow, rise: 0.5}, leak: true, minFind: 0.6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, u, o := rate(t, tc.c)
			t.Logf("rising %.1f %%, inconclusive %.1f %% of 200 seeds (time-only fit: rising %.1f %%)", 100*r, 100*u, 100*o)
			if !tc.leak && r > 0.01 {
				t.Errorf("false alarms: %.1f %% of seeds rising; want ≤ 1 %%", 100*r)
			}
			if want := cmp.Or(tc.minFind, 0.9); tc.leak && r < want {
				t.Errorf("finds: %.1f %% of seeds rising; want ≥ %.0f %%", 100*r, 100*want)
			}
		})
	}
}

// TestCostDriftContentionReasons checks the reasons of a rise the
// contention explains and of one in step with it.
func TestCostDriftContentionReasons(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 21))
	at, cost, z := contended{n: 30, z0: 0.3, z1: 1.8, jitter: 0.3, slow: linearSlow}.series(rng)
	d := costDrift(at, cost, Contention{Others: z})
	if d.Rising || !d.Inconclusive || !strings.Contains(d.Reason, "the contention explains the rise") || strings.Contains(d.Reason, "a CPU leak,") {
		t.Errorf("explained: got %+v; want inconclusive, the contention named", d)
	}
	at, cost, z = contended{n: 30, z0: 0.3, z1: 1.8, slow: linearSlow}.series(rng) // no jitter: z follows time
	d = costDrift(at, cost, Contention{Others: z})
	if d.Rising || !d.Inconclusive || !strings.Contains(d.Reason, "cannot tell a leak from the machine") {
		t.Errorf("in step: got %+v; want inconclusive, cannot tell a leak from the contention", d)
	}
	if d.ContentionStart >= d.ContentionEnd || d.ContentionEnd < 1.5 {
		t.Errorf("contention %.2f to %.2f cores; want about 0.5 to 1.6", d.ContentionStart, d.ContentionEnd)
	}
}

func TestWithCPU(t *testing.T) {
	rising := CPU{Cost: CostDrift{Rising: true}}
	for _, tc := range []struct {
		overall string
		c       CPU
		want    string
	}{
		{OverallClean, rising, OverallLeak},
		{OverallInconclusive, rising, OverallLeak},
		{OverallFailing, rising, OverallFailing},
		{OverallClean, CPU{Cost: CostDrift{Inconclusive: true}}, OverallClean},
		{OverallInconclusive, CPU{}, OverallInconclusive},
	} {
		if got := WithCPU(tc.overall, tc.c); got != tc.want {
			t.Errorf("WithCPU(%s, rising %v) = %s; want %s", tc.overall, tc.c.Cost.Rising, got, tc.want)
		}
	}
}

// A contention that held (or fell) explains no rise, however closely its
// small wander follows the time: the case of a real CPU leak soaked on a
// busy machine whose load did not change (TestEndToEndCPUCostPerRequestRising
// read "cannot tell" there, with other work 1.24 to 1.31 cores and the
// run-queue wait falling, before this rule).
func TestCostDriftContentionThatHeldExplainsNothing(t *testing.T) {
	const n = 10
	at, cost := make([]float64, n), make([]float64, n)
	others, wait := make([]float64, n), make([]float64, n)
	for i := range n {
		f := float64(i) / (n - 1)
		at[i] = 60 * float64(i)
		cost[i] = 0.00038 * (1 + 1.05*f) * (1 + 0.02*math.Sin(float64(3*i)))
		others[i] = 1.24 + 0.07*f // a slight drift in step with time
		wait[i] = 1.09 - 0.12*f   // falling
	}
	d := costDrift(at, cost, Contention{Others: others, Wait: wait})
	if !d.Rising || d.Inconclusive {
		t.Errorf("got %+v; want rising: the contention held", d)
	}
}

// A run-queue wait that fell counts as a contention that moved (issue
// 42: a rise is a leak only when it survives every contention figure
// that rose and every one that fell). The CI run of
// TestEndToEndCPUCostPerRequestRising on a busy machine read other work
// 0.45 to 0.52 cores and the wait falling from 0.72 to 0.50 s per CPU
// second, the cost up 106 %: the wait fell in step with the time, so
// that run now reads inconclusive, naming the wait; on a quiet machine
// the wait stays near zero and does not count.
func TestCostDriftFallingWaitCounts(t *testing.T) {
	const n = 11
	at, cost := make([]float64, n), make([]float64, n)
	others, wait := make([]float64, n), make([]float64, n)
	for i := range n {
		f := float64(i) / (n - 1)
		at[i] = 1.2 * float64(i)
		cost[i] = 0.00038 * (1 + 1.06*f) * (1 + 0.03*math.Sin(float64(5*i)))
		others[i] = 0.45 + 0.07*f + 0.04*math.Sin(float64(7*i+1))
		wait[i] = 0.72 - 0.22*f + 0.01*math.Cos(float64(3*i))
	}
	d := costDrift(at, cost, Contention{Others: others, Wait: wait})
	if d.Rising || !d.Inconclusive || !strings.Contains(d.Reason, "run-queue wait from 0.70 to 0.52") {
		t.Errorf("got %+v; want inconclusive, naming the wait that fell", d)
	}
	for i := range wait {
		wait[i] = 0.01 // a quiet machine
	}
	if d := costDrift(at, cost, Contention{Others: others, Wait: wait}); !d.Rising {
		t.Errorf("quiet machine: got %+v; want rising", d)
	}
}

// TestPctWords: a share under 1 % keeps a decimal ("each request is 0 %
// CPU (D/R = 95 µs / 23 ms)" read as no CPU at all).
func TestPctWords(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{{95e-6 / 23e-3, "0.4 %"}, {0.0002, "under 0.1 %"}, {0, "0 %"}, {0.18, "18 %"}, {0.0096, "1 %"}} {
		if got := pct(tt.f); got != tt.want {
			t.Errorf("pct(%g) = %q; want %q", tt.f, got, tt.want)
		}
	}
}
