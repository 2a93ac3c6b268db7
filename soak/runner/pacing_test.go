package runner

import (
	"math"
	"runtime"
	"testing"
	"time"
)

// The automatic interval aims at about 300 samples over the soak, within
// the probe's cost floor and 1 s.
func TestPacerChoosesTheIntervalFromThePlanAndTheThroughput(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		plan    plan
		cost    float64 // CPU seconds per sample
		loadSec float64
		done    uint64
		want    time.Duration
	}{
		{"-n, no throughput yet", plan{requests: 200000, warmReq: 20000}, 80e-6, 0, 0, startInterval},
		{"-n and -d 8h, no throughput yet", plan{requests: 200000, duration: 8 * time.Hour, warmReq: 20000, warmDur: 30 * time.Minute}, 80e-6, 0, 0, startInterval},
		// 30 000 req/s: 180 000 soak requests take 6 s; 6 s / 300 = 20 ms.
		{"-n, fast server", plan{requests: 200000, warmReq: 20000}, 80e-6, 0.5, 15000, 20 * ms},
		// 20 s of soak at 300 samples would be 67 ms.
		{"-n, slower server", plan{requests: 200000, warmReq: 20000}, 80e-6, 1, 9000, 66666666},
		// 3 s of soak gives 10 ms; a 400 µs sample allows 20 ms at most.
		{"-n, costly probe", plan{requests: 200000, warmReq: 20000}, 400e-6, 0.3, 20000, 20 * ms},
		{"-n, never below 10 ms", plan{requests: 200000, warmReq: 20000}, 10e-6, 0.1, 20000, MinInterval},
		{"-d 40s", plan{duration: 40 * time.Second, warmDur: 4 * time.Second}, 80e-6, 0, 0, 120 * ms},
		{"-d 8h keeps 1 s", plan{duration: 8 * time.Hour, warmDur: 30 * time.Minute}, 80e-6, 0, 0, time.Second},
		// -d 10 min, but -n ends it after 100 s at 1000 req/s.
		{"-n before -d", plan{requests: 100000, duration: 10 * time.Minute, warmReq: 10000, warmDur: time.Minute}, 80e-6, 1, 1000, 300 * ms},
	} {
		p := newPacer(0, tc.plan)
		p.observe(tc.cost)
		got := p.underLoad(tc.loadSec, tc.done, true)
		if d := got - tc.want; d < -ms/10 || d > ms/10 {
			t.Errorf("%s: interval %s; want %s", tc.name, got, tc.want)
		}
	}
}

// --interval overrides the pacing, in every phase.
func TestPacerKeepsAFixedInterval(t *testing.T) {
	p := newPacer(250*time.Millisecond, plan{requests: 1000})
	p.observe(0.01)
	if got := p.underLoad(1, 10, false); got != 250*time.Millisecond {
		t.Errorf("under load: %s; want 250ms", got)
	}
	if got := p.idle(time.Second); got != 250*time.Millisecond {
		t.Errorf("idle: %s; want 250ms", got)
	}
}

// An idle phase gets at least 10 samples, within the cost floor.
func TestPacerSamplesIdlePhasesTenTimesAtLeast(t *testing.T) {
	p := newPacer(0, plan{duration: 8 * time.Hour})
	p.observe(80e-6)
	if got := p.idle(3 * time.Second); got != 300*time.Millisecond {
		t.Errorf("3 s baseline of an 8 h run: %s; want 300ms", got)
	}
	p.cur = 20 * time.Millisecond
	if got := p.idle(10 * time.Second); got != 20*time.Millisecond {
		t.Errorf("10 s cool-down after a 20 ms soak: %s; want 20ms", got)
	}
	if got := p.baseline(3 * time.Second); got != 150*time.Millisecond {
		t.Errorf("3 s baseline before a 20 ms soak: %s; want 150ms (twenty samples, not the soak's cadence)", got)
	}
}

// Small changes keep the ticker; a change over 20 % moves it.
func TestPacerReticksOnlyOnLargeChanges(t *testing.T) {
	p := newPacer(0, plan{requests: 1000})
	p.cur = 100 * time.Millisecond
	if p.retick(110 * time.Millisecond) {
		t.Errorf("retick at +10 %%; want none")
	}
	if !p.retick(50*time.Millisecond) || p.cur != 50*time.Millisecond {
		t.Errorf("retick at -50 %%: cur %s; want 50ms", p.cur)
	}
}

func TestPacerReportsItsCost(t *testing.T) {
	p := newPacer(0, plan{requests: 1000})
	for _, c := range []float64{100e-6, 300e-6} {
		p.observe(c)
	}
	p.cur = 20 * time.Millisecond
	p.ran()
	s := p.sampling(2)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !s.Auto || s.IntervalSeconds != 0.02 || !near(s.ProbeCostSeconds, 200e-6) || !near(s.CPUShare, 200e-6) {
		t.Errorf("sampling = %+v; want auto, 0.02 s, 200 µs per sample, 0.0002 of a core", *s)
	}
}

// threadCPU counts this thread's CPU time, with the goroutine locked to
// the thread as take does.
func TestThreadCPUAdvances(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := threadCPU()
	x := 0
	for i := 0; i < 1e7; i++ {
		x += i
	}
	if b := threadCPU(); b <= a || x == 0 {
		t.Errorf("thread CPU went from %g to %g s over a busy loop", a, b)
	}
}

// TestSmapsPacedToRequests: a run bounded by requests only reads PSS/USS
// about 30 times over the load the throughput leaves, once the warm-up
// ended and a second of load ran; not before.
func TestSmapsPacedToRequests(t *testing.T) {
	p := newPacer(0, plan{requests: 100_000})
	cases := []struct {
		name     string
		loadSec  float64
		done     uint64
		inWarmup bool
		want     time.Duration
		ok       bool
	}{
		{"in the warm-up", 5, 5000, true, 0, false},
		{"too soon to know the throughput", 0.5, 500, false, 0, false},
		{"1000/s: 95 s left", 5, 5000, false, 95 * time.Second / 30, true},
		{"5000/s: 19 s left, no closer than 2 s", 1, 5000, false, 2 * time.Second, true},
		{"100/s: 990 s left, no further than 30 s", 10, 1000, false, 30 * time.Second, true},
	}
	for _, c := range cases {
		d, ok := p.smaps(c.loadSec, c.done, c.inWarmup)
		if ok != c.ok || (ok && (d < c.want-time.Millisecond || d > c.want+time.Millisecond)) {
			t.Errorf("%s: smaps = %s, %v; want %s, %v", c.name, d, ok, c.want, c.ok)
		}
	}
	o := Options{}
	o.Load.Requests = 100_000
	o.setDefaults()
	if !o.smapsByRequests {
		t.Errorf("a -n run with the default smaps interval: not paced by requests; want it paced")
	}
	o = Options{}
	o.Load.Requests, o.Sampler.SmapsInterval = 100_000, 5*time.Second
	if o.setDefaults(); o.smapsByRequests {
		t.Errorf("a -n run with --smaps-interval set: paced by requests; want the set interval kept")
	}
}
