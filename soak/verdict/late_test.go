package verdict

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// lateRun is a 2 h soak sampled every 5 s at 100 req/s, 60 s of warm-up
// and no cool-down, on 100 MiB with 0.5 MiB of white noise and 1 MiB of
// 5-minute AR(1) wander (the study's slow designs' noise), leaking leak
// bytes a request from the share from of the soak's requests on.
func lateRun(rng *rand.Rand, leak, from float64) []Point {
	const sample, rate, soakSec, warm = 5.0, 100.0, 7200.0, 60.0
	phi := math.Exp(-sample / 300)
	var pts []Point
	var req, level float64
	start := from * rate * soakSec
	for t := 0.0; t <= warm+soakSec; t += sample {
		ph := Soak
		if t < warm {
			ph = Warmup
		}
		req += rate * sample
		level = phi*level + math.Sqrt(1-phi*phi)*rng.NormFloat64()
		v := 100<<20 + (1<<20)*level + (0.5*(1<<20))*rng.NormFloat64()
		if soaked := req - rate*warm; soaked > start {
			v += leak * (soaked - start)
		}
		pts = append(pts, Point{Requests: req, Seconds: t, Value: math.Round(v/4096) * 4096, Phase: ph})
	}
	return pts
}

// TestLateStartIsNamed: a leak 13× the horizon floor (about 100
// B/request at 100 req/s) that begins at 50 % of a 2 h soak is a leak
// measured from where it began, and the report names where: the knot
// within a tenth of the soak of the truth, "since growth began at
// request N (T into the run)", the rate after it within a fifth of the
// truth (the interval's coverage after a chosen knot is the study's,
// docs/verdict-study.md). Before issue 41's change-point, such soaks read
// "climbed … in 3 steps" or inconclusive.
func TestLateStartIsNamed(t *testing.T) {
	const leak, from, soakReq = 100.0, 0.5, 720000.0
	for seed := range uint64(10) {
		res := AnalyzeResource(lateRun(rand.New(rand.NewPCG(seed, 41)), leak, from), rss)
		if res.Verdict != Leak || res.Change != ChangeBegan {
			t.Fatalf("seed %d: got %s, change %q (%s); want a leak whose growth began late", seed, res.Verdict, res.Change, res.Reason)
		}
		truth := 6000 + from*soakReq // the warm-up's requests, then half the soak's
		if math.Abs(res.ChangeAtRequest-truth) > 0.1*soakReq {
			t.Errorf("seed %d: change at request %.0f; want within %.0f of %.0f", seed, res.ChangeAtRequest, 0.1*soakReq, truth)
		}
		if !strings.Contains(res.Reason, "since growth began at request ") || !strings.Contains(res.Reason, " into the run)") {
			t.Errorf("seed %d: reason %q; want where growth began named", seed, res.Reason)
		}
		if res.Tail == nil || math.Abs(res.PerRequest-leak) > 0.2*leak || res.PerRequest != res.Tail.PerRequest {
			t.Errorf("seed %d: per request %.3g, tail %+v; want the rate after the knot, within a fifth of %g", seed, res.PerRequest, res.Tail, leak)
		}
		if res.ChangeAtSeconds < 60+0.4*7200 || res.ChangeAtSeconds > 60+0.6*7200 {
			t.Errorf("seed %d: change at %.0f s; want about %.0f", seed, res.ChangeAtSeconds, 60+from*7200)
		}
	}
}

// TestSmoothGrowthIsNotSteps: growth that begins late and goes on
// smoothly is never described as steps, whatever else it reads (3× and
// 13× the floor from 25, 50 and 75 % of the soak, 10 seeds each).
func TestSmoothGrowthIsNotSteps(t *testing.T) {
	for _, leak := range []float64{23, 100} {
		for _, from := range []float64{0.25, 0.5, 0.75} {
			for seed := range uint64(10) {
				res := AnalyzeResource(lateRun(rand.New(rand.NewPCG(seed, 7)), leak, from), rss)
				if strings.Contains(res.Reason, " steps") || strings.Contains(res.Reason, "stepped") || res.Step != nil {
					t.Errorf("%g B/request from %g, seed %d: %s (%s); want smooth growth not described as steps", leak, from, seed, res.Verdict, res.Reason)
				}
			}
		}
	}
}

// TestChangeJSON: the change's fields are in the JSON beside the tail,
// and a report written before them still reads.
func TestChangeJSON(t *testing.T) {
	res := AnalyzeResource(lateRun(rand.New(rand.NewPCG(1, 41)), 100, 0.5), rss)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"change":"began"`, `"change_at_request":`, `"change_at_seconds":`, `"tail":{`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s; want %s", b, k)
		}
	}
	var old Resource
	if err := json.Unmarshal([]byte(`{"verdict":"leak","unit":"bytes","per_request":12,"ci95":[10,14],"tail":{"at_requests":5,"before_per_request":1,"per_request":12,"ci95":[10,14]}}`), &old); err != nil {
		t.Fatalf("an older report: %v", err)
	}
	if old.Change != "" || old.ChangeAtRequest != 0 || old.Tail == nil {
		t.Errorf("an older report read as change %q at %g, tail %v; want none, the tail kept", old.Change, old.ChangeAtRequest, old.Tail)
	}
}
