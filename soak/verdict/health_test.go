package verdict

import (
	"cmp"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// loadSeries simulates a load of rps requests a second for secs seconds,
// sampled every second after a 3 s idle baseline, where a request sent at
// second s (from the load's start) fails with probability p(s).
func loadSeries(rng *rand.Rand, secs, rps int, p func(s float64) float64) []HealthPoint {
	var pts []HealthPoint
	for i := range 4 {
		pts = append(pts, HealthPoint{Seconds: float64(i), Phase: Baseline})
	}
	var req, errs uint64
	for s := range secs {
		q := p(float64(s))
		for range rps {
			req++
			if rng.Float64() < q {
				errs++
			}
		}
		ph := Soak
		if s < secs/10 {
			ph = Warmup
		}
		pts = append(pts, HealthPoint{Seconds: float64(s + 4), Requests: req, Errors: errs, Phase: ph})
	}
	return append(pts, HealthPoint{Seconds: float64(secs + 5), Requests: req, Errors: errs, Phase: Cooldown})
}

func constant(q float64) func(float64) float64 { return func(float64) float64 { return q } }

func TestHealthCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	status := []Cause{{Cause: "status_mismatch", Count: 30000, Examples: []Example{{Text: "HTTP/1.1 404 Not Found", Count: 30000}}}}
	for _, c := range []struct {
		name    string
		pts     []HealthPoint
		causes  []Cause
		verdict string
		by      []string
		reason  string
	}{
		{"every request 404", loadSeries(rng, 300, 100, constant(1)), status, HealthFailing, []string{FailingAll, FailingWindow},
			`30000 of 30000 requests failed (100 %); status_mismatch 30000 (e.g. "HTTP/1.1 404 Not Found"); errors from 0 s to the end`},
		{"no errors", loadSeries(rng, 300, 100, constant(0)), nil, HealthOK, nil,
			"0 of 30000 requests failed (0 %), within 1 %; no 60 s window above 10 %"},
		{"2 % constant", loadSeries(rng, 300, 100, constant(0.02)), nil, HealthFailing, []string{FailingRate}, ""},
		{"a 60 s outage", loadSeries(rng, 600, 100, func(s float64) float64 {
			if s >= 200 && s < 260 {
				return 1
			}
			return 0
		}), nil, HealthFailing, []string{FailingRate, FailingWindow}, "worst 60 s window: 6000 of 6000 failed (100 %) from 200 s to 260 s"},
		{"a 10 s outage in 20 min", loadSeries(rng, 1200, 100, func(s float64) float64 {
			if s >= 500 && s < 510 {
				return 1
			}
			return 0
		}), nil, HealthFailing, []string{FailingWindow}, "errors from 500 s to 510 s"},
		{"one error in a short slow run", loadSeries(rng, 10, 1, func(s float64) float64 {
			if s == 5 {
				return 1
			}
			return 0
		}), nil, Inconclusive, nil, "1 of 10 requests failed (10 %): too few requests to judge (want at least 20)"},
		{"two errors in 100", loadSeries(rng, 100, 1, func(s float64) float64 {
			if s == 10 || s == 50 {
				return 1
			}
			return 0
		}), nil, Inconclusive, nil, "2 of 100 requests failed (2 %): above 1 %, but too few errors to call it failing (want at least 3)"},
		{"a few requests, all failed", loadSeries(rng, 5, 1, constant(1)), nil, HealthFailing, []string{FailingAll}, "5 of 5 requests failed"},
		{"no requests", loadSeries(rng, 10, 0, constant(0)), nil, Inconclusive, nil, "no requests completed"},
		{"rising 0 to 20 %", loadSeries(rng, 300, 100, func(s float64) float64 { return 0.2 * s / 300 }), nil, HealthFailing,
			[]string{FailingRate, FailingWindow, FailingRising}, "degrading: the error rate rose from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := AnalyzeHealth(HealthInput{Points: c.pts, Causes: c.causes})
			if h.Verdict != c.verdict {
				t.Errorf("verdict = %s; want %s (%s)", h.Verdict, c.verdict, h.Reason)
			}
			if !slices.Equal(h.Failing, c.by) {
				t.Errorf("failing by %v; want %v (%s)", h.Failing, c.by, h.Reason)
			}
			if !strings.Contains(h.Reason, c.reason) {
				t.Errorf("reason = %q; want it to contain %q", h.Reason, c.reason)
			}
			if _, err := json.Marshal(h); err != nil {
				t.Errorf("the health does not encode: %v", err)
			}
		})
	}
}

// TestHealthSummaryTotals: the load's summary gives the totals when the
// samples missed the last requests.
func TestHealthSummaryTotals(t *testing.T) {
	pts := loadSeries(rand.New(rand.NewPCG(3, 4)), 60, 10, constant(0))
	h := AnalyzeHealth(HealthInput{Points: pts, Requests: 700, Errors: 100})
	if h.Requests != 700 || h.Errors != 100 || h.Verdict != HealthFailing {
		t.Errorf("requests %d, errors %d, verdict %s; want 700, 100, failing", h.Requests, h.Errors, h.Verdict)
	}
	if h.FirstErrorSeconds == nil || !h.ErrorsToEnd {
		t.Errorf("the errors' span is not set from the summary: %+v", h)
	}
}

// TestHealthFalseAlarmsAndMisses runs each synthetic series over many
// seeds and bounds how often it is called failing (false alarms) or not
// (misses), and how often the trend alone calls it rising.
func TestHealthFalseAlarmsAndMisses(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 50
	}
	outage := func(s float64) float64 {
		if s >= 120 && s < 180 {
			return 1
		}
		return 0
	}
	for _, c := range []struct {
		name string
		p    func(rng *rand.Rand) func(float64) float64
		// bounds on the share of seeds failing and rising
		failLo, failHi, riseLo, riseHi float64
		rps                            int // 0: 100
	}{
		{"constant 0", func(*rand.Rand) func(float64) float64 { return constant(0) }, 0, 0, 0, 0, 0},
		{"constant 0.5 %", func(*rand.Rand) func(float64) float64 { return constant(0.005) }, 0, 0.02, 0, 0.02, 0},
		{"constant 2 %", func(*rand.Rand) func(float64) float64 { return constant(0.02) }, 1, 1, 0, 0.02, 0},
		{"bursts, 0.5 % on average", bursts, 0, 0.02, 0, 0.02, 0},
		{"wandering about 0.5 %", wanderingRate, 0, 0.03, 0, 0.03, 0},
		{"rising 0 to 20 %", func(*rand.Rand) func(float64) float64 { return func(s float64) float64 { return 0.2 * s / 300 } }, 1, 1, 1, 1, 0},
		{"rising 0 to 1.5 %", func(*rand.Rand) func(float64) float64 { return func(s float64) float64 { return 0.015 * s / 300 } }, 0.95, 1, 0.95, 1, 0},
		{"rising 0.5 % to 1 %", func(*rand.Rand) func(float64) float64 { return func(s float64) float64 { return 0.005 + 0.005*s/300 } }, 0.03, 0.35, 0.03, 0.35, 0}, // weak: the power is low, and measured
		{"rising 0 to 1.5 % at 20 req/s", func(*rand.Rand) func(float64) float64 { return func(s float64) float64 { return 0.015 * s / 300 } }, 0.08, 0.45, 0.08, 0.45, 20},
		{"one 60 s outage mid-run", func(*rand.Rand) func(float64) float64 { return outage }, 1, 1, 0, 0.02, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var failing, rising int
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 7))
				h := AnalyzeHealth(HealthInput{Points: loadSeries(rng, 300, cmp.Or(c.rps, 100), c.p(rng))})
				if h.Verdict == HealthFailing {
					failing++
				}
				if h.Trend != nil && h.Trend.Rising {
					rising++
				}
			}
			f, r := float64(failing)/float64(seeds), float64(rising)/float64(seeds)
			t.Logf("%s: failing %.1f %%, rising %.1f %% of %d seeds", c.name, 100*f, 100*r, seeds)
			if f < c.failLo || f > c.failHi {
				t.Errorf("failing in %.1f %% of seeds; want %.0f %% to %.0f %%", 100*f, 100*c.failLo, 100*c.failHi)
			}
			if r < c.riseLo || r > c.riseHi {
				t.Errorf("rising in %.1f %% of seeds; want %.0f %% to %.0f %%", 100*r, 100*c.riseLo, 100*c.riseHi)
			}
		})
	}
}

// bursts fail 10 % of a second's requests in about one second in 20, at
// random: 0.5 % on average, clustered.
func bursts(rng *rand.Rand) func(float64) float64 {
	on := make([]bool, 400)
	for i := range on {
		on[i] = rng.Float64() < 0.05
	}
	return func(s float64) float64 {
		if on[int(s)] {
			return 0.1
		}
		return 0
	}
}

// wanderingRate is an error rate of about 0.5 % whose logarithm wanders
// as an AR(1) process (ρ = 0.9 between 10 s steps, sd 0.46): a null whose
// neighbours are alike, the case the autocorrelation correction is for.
func wanderingRate(rng *rand.Rand) func(float64) float64 {
	l := make([]float64, 40)
	v := 0.0
	for i := range l {
		v = 0.9*v + 0.2*rng.NormFloat64()
		l[i] = v
	}
	return func(s float64) float64 { return 0.005 * math.Exp(l[int(s)/10]) }
}

func TestWithHealth(t *testing.T) {
	for _, c := range []struct {
		overall string
		h       *Health
		want    string
	}{
		{OverallClean, nil, OverallClean},
		{OverallClean, &Health{Verdict: HealthOK}, OverallClean},
		{OverallLeak, &Health{Verdict: HealthFailing}, OverallFailing},
		{OverallInconclusive, &Health{Verdict: Inconclusive}, OverallInconclusive},
	} {
		if got := WithHealth(c.overall, c.h); got != c.want {
			t.Errorf("WithHealth(%s, %+v) = %s; want %s", c.overall, c.h, got, c.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for f, want := range map[float64]string{0: "0 %", 1: "100 %", 0.009: "0.9 %", 0.000123: "0.0123 %"} {
		if got := Percent(f); got != want {
			t.Errorf("Percent(%g) = %q; want %q", f, got, want)
		}
	}
}

// TestHealthCountsTimeUnavailable: a freeze is an outage by time, not
// only by the requests it failed. The load: 25 s at 100 requests a
// second after a 3 s baseline (the load starts at 3 s on the points'
// scale), no request failing.
func TestHealthCountsTimeUnavailable(t *testing.T) {
	pts := loadSeries(rand.New(rand.NewPCG(3, 4)), 25, 100, constant(0))
	for _, c := range []struct {
		name    string
		outages []Outage
		th      HealthThresholds
		verdict string
		reason  string
		seconds float64
	}{
		{"stopped 8 s of 25", []Outage{{FromSeconds: 8.1, ToSeconds: 16.1, Why: OutageStopped}}, HealthThresholds{Timeout: 1},
			HealthFailing, "unavailable for 8 s of the 27 s load (29.6 %, more than the 1 s allowed): stopped from 5.1 s to 13.1 s", 8},
		{"stall within the allowance", []Outage{{FromSeconds: 10, ToSeconds: 10.8, Why: OutageStalled}}, HealthThresholds{Timeout: 1},
			HealthOK, "0 of 2500 requests failed", 0.8},
		{"the share allows more in a long load", []Outage{{FromSeconds: 10, ToSeconds: 10.2, Why: OutageStalled}}, HealthThresholds{},
			HealthOK, "0 of 2500 requests failed", 0.2},
		{"overlapping stop and stall are one outage", []Outage{{FromSeconds: 8, ToSeconds: 14, Why: OutageStopped}, {FromSeconds: 12, ToSeconds: 16, Why: OutageStalled}},
			HealthThresholds{Timeout: 1}, HealthFailing, "stopped and stalled from 5 s to 13 s", 8},
		{"an explicit allowance", []Outage{{FromSeconds: 8, ToSeconds: 16, Why: OutageStopped}}, HealthThresholds{MaxUnavailable: 10},
			HealthOK, "0 of 2500 requests failed", 8},
		{"clipped to the load", []Outage{{FromSeconds: 0, ToSeconds: 5, Why: OutageStopped}}, HealthThresholds{Timeout: 1},
			HealthFailing, "stopped from 0 s to 2 s", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := AnalyzeHealth(HealthInput{Points: pts, Outages: c.outages, Thresholds: c.th})
			if h.Verdict != c.verdict || !strings.Contains(h.Reason, c.reason) {
				t.Errorf("verdict %s, reason %q; want %s and %q", h.Verdict, h.Reason, c.verdict, c.reason)
			}
			if h.Unavailable == nil || math.Abs(h.Unavailable.Seconds-c.seconds) > 1e-9 {
				t.Errorf("unavailable %+v; want %g s", h.Unavailable, c.seconds)
			}
			if failing := slices.Contains(h.Failing, FailingUnavailable); failing != (c.verdict == HealthFailing) {
				t.Errorf("failing by %v", h.Failing)
			}
		})
	}
	if h := AnalyzeHealth(HealthInput{Points: pts}); h.Unavailable != nil || h.Verdict != HealthOK {
		t.Errorf("no outage: unavailable %+v, verdict %s; want nil, ok", h.Unavailable, h.Verdict)
	}
}
