package abrun

import "testing"

func TestJudgeAndDecided(t *testing.T) {
	for _, c := range []struct {
		lo, hi, margin float64
		want           string
	}{
		{20, 30, 16, Regressed},
		{-30, -20, 16, Improved},
		{-10, 10, 16, Same},
		{10, 20, 16, Inconclusive},
		{-20, 10, 16, Inconclusive},
	} {
		if got := judge(c.lo, c.hi, c.margin); got != c.want {
			t.Errorf("judge(%v, %v, %v) = %s; want %s", c.lo, c.hi, c.margin, got, c.want)
		}
	}
	m := func(name, v string) Metric { return Metric{Name: name, Verdict: v} }
	for _, c := range []struct {
		ms   []Metric
		want bool
	}{
		{[]Metric{m("rss_per_request", Same), m("cpu_per_request", Same)}, true},
		{[]Metric{m("rss_per_request", Regressed), m("cpu_per_request", Inconclusive)}, true},
		{[]Metric{m("rss_per_request", Inconclusive), m("cpu_per_request", Regressed)}, false},
		{[]Metric{m("rss_per_request", Same), m("cpu_per_request", Regressed)}, true},
		{[]Metric{m("rss_per_request", Same), m("cpu_per_request", Inconclusive)}, false},
	} {
		if got := Decided(c.ms); got != c.want {
			t.Errorf("Decided(%v) = %v; want %v", c.ms, got, c.want)
		}
	}
}

// TestJudgeKeepsDecisions: a decided metric keeps its verdict at later
// looks, and the interval only narrows.
func TestJudgeKeepsDecisions(t *testing.T) {
	j := NewJudge(Margins{}, DefaultAlpha)
	def := defs[2] // cpu_per_request
	first := j.look(def, estimate{d: 0.3, se: 0.01, margin: 0.05}, 4)
	if first.Verdict != Regressed {
		t.Fatalf("first look: %s; want regressed", first.Verdict)
	}
	j.metrics[def.name] = first
	tl := NewTally()
	for _, m := range j.Look(tl, 6) {
		if m.Name == def.name && m.Verdict != Regressed {
			t.Errorf("later look: %s; want the decision kept", m.Verdict)
		}
	}
	j2 := NewJudge(Margins{}, DefaultAlpha)
	a := j2.look(def, estimate{d: 0.02, se: 0.02, margin: 0.05}, 4)
	b := j2.look(def, estimate{d: 0.02, se: 0.5, margin: 0.05}, 6)
	if b.CI95[0] < a.CI95[0] || b.CI95[1] > a.CI95[1] {
		t.Errorf("interval widened from %v to %v; want the running intersection", a.CI95, b.CI95)
	}
}
