package runner

import (
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestParseWarmup(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Warmup
		err  bool
	}{
		{"0", Warmup{None: true}, false},
		{"none", Warmup{None: true}, false},
		{"10%", Warmup{Fraction: 0.1}, false},
		{"5000", Warmup{Requests: 5000}, false},
		{"30s", Warmup{Duration: 30 * time.Second}, false},
		{"100%", Warmup{}, true},
		{"-5s", Warmup{}, true},
		{"soon", Warmup{}, true},
	} {
		got, err := ParseWarmup(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestWarmupDefaultIsTenPercentOfThePlannedRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Options
		req     uint64
		elapsed time.Duration
	}{
		{"by duration", Options{Load: loadFor(0, 10*time.Minute)}, 0, time.Minute},
		{"by requests", Options{Load: loadFor(1000000, 0)}, 100000, 0},
		{"capped at 30 min", Options{Load: loadFor(0, 24*time.Hour)}, 0, 30 * time.Minute},
		{"by both, whichever first", Options{Load: loadFor(1000000, 8*time.Hour)}, 100000, 30 * time.Minute},
		{"no bound", Options{Load: loadFor(0, 0)}, 0, 60 * time.Second},
		{"explicit", Options{Load: loadFor(0, time.Hour), Warmup: Warmup{Requests: 5}}, 5, 0},
		{"none", Options{Load: loadFor(0, time.Hour), Warmup: Warmup{None: true}}, 0, 0},
	} {
		req, el := tc.o.warmupEnd()
		if req != tc.req || el != tc.elapsed {
			t.Errorf("%s: warmupEnd = %d requests, %s; want %d, %s", tc.name, req, el, tc.req, tc.elapsed)
		}
	}
}

// A run bounded by -n and -d that ends by its request count long before
// its duration leaves the default warm-up after 10 % of the requests, so
// the soak is not all warm-up.
func TestWarmupEndsAtTheFirstBoundReached(t *testing.T) {
	o := Options{Load: loadFor(1000, time.Hour)}
	r := &runner{o: &o}
	r.wReq, r.wDur = o.warmupEnd()
	if got := r.phase(model.Record{Elapsed: 1}); got != verdict.Baseline {
		t.Errorf("phase before the load started = %s; want baseline", model.PhaseName(got))
	}
	r.loadStarted, r.loadStart = true, 3 // after a 3 s baseline
	for _, tc := range []struct {
		requests uint64
		elapsed  float64
		want     verdict.Phase
	}{
		{50, 3 + 1, verdict.Warmup},
		{100, 3 + 2, verdict.Soak},     // 10 % of the requests
		{90, 3 + 6*60, verdict.Soak},   // 10 % of the duration, from the load's start
		{90, 6*60 + 2, verdict.Warmup}, // not yet 6 min of load
		{1000, 3 + 20, verdict.Soak},
	} {
		if got := r.phase(model.Record{Requests: tc.requests, Elapsed: tc.elapsed}); got != tc.want {
			t.Errorf("phase after %d requests, %g s = %s; want %s", tc.requests, tc.elapsed, model.PhaseName(got), model.PhaseName(tc.want))
		}
	}
}

// Sampling is paced to the run unless --interval sets it; the progress
// lines keep their own interval (the load's default, 1 s).
func TestIntervalDefaultsToAutoAndLeavesTheProgressInterval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        Options
		sample   time.Duration
		progress time.Duration
	}{
		{"default", Options{}, 0, 0},
		{"--interval", Options{Interval: 250 * time.Millisecond}, 250 * time.Millisecond, 0},
		{"own load interval", Options{Interval: 5 * time.Second, Load: load.Options{Interval: time.Second}}, 5 * time.Second, time.Second},
	} {
		tc.o.setDefaults()
		if tc.o.Interval != tc.sample || tc.o.Load.Interval != tc.progress {
			t.Errorf("%s: got sampling %s, progress %s; want %s, %s", tc.name, tc.o.Interval, tc.o.Load.Interval, tc.sample, tc.progress)
		}
	}
	s := DefaultSpec()
	s.Load.URL, s.Load.Requests, s.Sampling.Interval = "http://127.0.0.1/", 10, 5*time.Millisecond
	if es := s.Check(); len(es) != 1 || es[0].Path != "sampling.interval" {
		t.Errorf("interval 5ms: errors %v; want one, at sampling.interval", es)
	}
}

func loadFor(n uint64, d time.Duration) load.Options { return load.Options{Requests: n, Duration: d} }
