package abrun

import (
	"math"
	"testing"

	"github.com/soakd/soakd/soak/compare"
)

func TestDecided(t *testing.T) {
	res := func(v ...string) compare.Result {
		r := compare.Result{Metrics: map[string]compare.Metric{
			"rss_per_request": {Verdict: v[0]}, "fds_per_request": {Verdict: compare.Same}, "cpu_per_request": {Verdict: v[1]}}}
		r.Verdict = compare.Overall(r.Metrics)
		return r
	}
	for _, c := range []struct {
		rss, cpu string
		want     bool
	}{
		{compare.Same, compare.Same, true},
		{compare.Regressed, compare.Inconclusive, true},
		{compare.Inconclusive, compare.Regressed, false},
		{compare.Same, compare.Regressed, true},
		{compare.Same, compare.Inconclusive, false},
	} {
		if got := Decided(res(c.rss, c.cpu)); got != c.want {
			t.Errorf("Decided(rss %s, cpu %s) = %v; want %v", c.rss, c.cpu, got, c.want)
		}
	}
}

// TestJudgeKeepsDecisions: a decided metric keeps its verdict at later
// looks, the interval only narrows, and a relative metric is reported as
// a share with its margin.
func TestJudgeKeepsDecisions(t *testing.T) {
	j := NewJudge(compare.DefaultMargins(), DefaultAlpha)
	def := defs[2] // cpu_per_request
	first := j.look(def, estimate{d: 0.3, se: 0.01, margin: testMargin(def, 0.05), margin0: 0.05})
	if first.Verdict != compare.Regressed || !first.Relative || first.Margin != 0.05 {
		t.Fatalf("first look: %+v; want regressed, relative, margin 0.05", first)
	}
	if d := first.Difference; d < 0.349 || d > 0.350 {
		t.Errorf("difference %v; want e^0.3 − 1 = 0.3499", d)
	}
	j.decided[def.name] = first
	if m := j.Look(NewTally(), 6).Metrics[def.name]; m.Verdict != compare.Regressed {
		t.Errorf("later look: %s; want the decision kept", m.Verdict)
	}
	j2 := NewJudge(compare.DefaultMargins(), DefaultAlpha)
	a := j2.look(def, estimate{d: 0.02, se: 0.02, margin: testMargin(def, 0.05)})
	b := j2.look(def, estimate{d: 0.02, se: 0.5, margin: testMargin(def, 0.05)})
	if b.CI95[0] < a.CI95[0] || b.CI95[1] > a.CI95[1] {
		t.Errorf("interval widened from %v to %v; want the running intersection", a.CI95, b.CI95)
	}
}

// TestThroughputDirection: a throughput 20 % lower in B is a regression
// reported as −20 %, judged against compare's 10 % drop.
func TestThroughputDirection(t *testing.T) {
	var def metricDef
	for _, d := range defs {
		if d.name == compare.Throughput {
			def = d
		}
	}
	j := NewJudge(compare.DefaultMargins(), DefaultAlpha)
	m := j.look(def, estimate{d: -math.Log(0.8), se: 0.005, margin: testMargin(def, 0.1), margin0: 0.1})
	if m.Verdict != compare.Regressed || m.Difference > -0.199 || m.Difference < -0.201 || !m.HigherIsBetter {
		t.Errorf("throughput at 0.8×: %+v; want regressed, difference −0.2, higher is better", m)
	}
	if m.CI95[0] > m.Difference || m.CI95[1] < m.Difference {
		t.Errorf("interval %v does not hold the difference %v", m.CI95, m.Difference)
	}
}
