package web

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestRequestRates checks that throughput comes from the request counts,
// not from Rate, which the first samples precede, and that the cool-down
// shows no load.
func TestRequestRates(t *testing.T) {
	// 300 requests/s sampled every 0.25 s for 10 s, Rate 0 until 1 s in,
	// then 2 s of cool-down.
	var recs []model.Record
	for i := 0; i <= 48; i++ {
		el := 0.25 * float64(i)
		r := model.Record{Elapsed: el, Phase: verdict.Soak, Requests: uint64(300 * min(el, 10))}
		switch {
		case el < 1:
			r.Phase = verdict.Warmup
		case el > 10:
			r.Phase = verdict.Cooldown
		}
		if el >= 1 {
			r.Rate = 300
		}
		recs = append(recs, r)
	}
	got := requestRates(recs, newAxes(recs))
	if len(got) < 4 {
		t.Fatalf("got %d points; want at least 4", len(got))
	}
	for _, pt := range got {
		want := 300.0
		if pt.X > 10 {
			want = 0
		}
		if math.Abs(pt.Y-want) > 1e-9 {
			t.Errorf("rate at %.2f s: got %.1f; want %.0f", pt.X, pt.Y, want)
		}
	}
	if got[0].X > 2 {
		t.Errorf("first point at %.2f s; want one within the first 2 s", got[0].X)
	}
}

// TestHeadroom checks that the highest value sits below the top of the y
// axis, on a linear and on a log axis.
func TestHeadroom(t *testing.T) {
	for _, logY := range []bool{false, true} {
		t.Run(map[bool]string{false: "linear", true: "log"}[logY], func(t *testing.T) {
			p := newPlot("x", "y")
			p.Y.Min, p.Y.Max = 1, 100
			if logY {
				p.Y.Scale = plot.LogScale{}
			}
			addHeadroom(p)
			if p.Y.Max <= 100 {
				t.Errorf("y max: got %g; want above 100", p.Y.Max)
			}
		})
	}
}

// A run with an idle baseline shows it shaded on the charts over time,
// and its throughput steps up where the load starts, with no window
// spanning both.
func TestBaselineIsShadedAndRatesStepAtTheLoad(t *testing.T) {
	// 3 s of baseline every 0.1 s, then 1000 requests/s for 10 s sampled
	// every 20 ms.
	var recs []model.Record
	for i := 0; i <= 30; i++ {
		recs = append(recs, model.Record{Sample: probes.Sample{Alive: true, RSSValid: true, RSS: 1 << 20, Incarnation: 1},
			Elapsed: 0.1 * float64(i), Phase: verdict.Baseline})
	}
	for i := 1; i <= 500; i++ {
		el := 3 + 0.02*float64(i)
		recs = append(recs, model.Record{Sample: probes.Sample{Alive: true, RSSValid: true, RSS: 1<<20 + uint64(i), Incarnation: 1},
			Elapsed: el, Phase: verdict.Soak, Requests: uint64(1000 * (el - 3))})
	}
	a := newAxes(recs)
	if a.baseSec != 3 {
		t.Errorf("baseline ends at %g s; want 3", a.baseSec)
	}
	for _, pt := range requestRates(recs, a) {
		want := 1000.0
		if pt.X < 3 {
			want = 0
		}
		if math.Abs(pt.Y-want) > 1e-6 {
			t.Errorf("rate at %.2f s: got %.1f; want %.0f", pt.X, pt.Y, want)
		}
	}
	rep := &model.Report{Records: recs, Resources: map[string]verdict.Resource{}, Target: model.TargetInfo{Probed: true}}
	c, ok, err := memoryByTime(rep, a)
	if err != nil || !ok {
		t.Fatalf("memory chart: %v, %v", ok, err)
	}
	if !strings.Contains(string(c.SVG), ">idle baseline (shaded)</text>") {
		t.Errorf("the memory chart over time has no baseline legend")
	}
}

func TestReportPageShowsTheBaselineAndTheSampling(t *testing.T) {
	rep := &model.Report{Verdict: "clean", Resources: map[string]verdict.Resource{}, Target: model.TargetInfo{Probed: true},
		Phases:   model.Phases{BaselineSeconds: 3, SoakSeconds: 5, SoakSamples: 250},
		Sampling: &model.Sampling{Auto: true, IntervalSeconds: 0.02, ProbeCostSeconds: 80e-6, CPUShare: 0.004}}
	var b strings.Builder
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<dt>Baseline</dt><dd>3.0 s idle before the load", "250 samples)", "<dt>Sampling</dt><dd>every 20ms (paced to the run)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
