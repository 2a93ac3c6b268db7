package abrun

import (
	"fmt"
	"math"
	"strings"
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
	j := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
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
	j2 := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
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
	j := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
	m := j.look(def, estimate{d: -math.Log(0.8), se: 0.005, margin: testMargin(def, 0.1), margin0: 0.1})
	if m.Verdict != compare.Regressed || m.Difference > -0.199 || m.Difference < -0.201 || !m.HigherIsBetter {
		t.Errorf("throughput at 0.8×: %+v; want regressed, difference −0.2, higher is better", m)
	}
	if m.CI95[0] > m.Difference || m.CI95[1] < m.Difference {
		t.Errorf("interval %v does not hold the difference %v", m.CI95, m.Difference)
	}
}

// TestJudgeDisagreeingLooks: when a look's interval misses the running
// intersection (the noise is not what the test assumes), the metric
// takes the hull of both, not the gap between them: a first look that
// straddles p99's 25 % margin (ln 1.25 = 0.223) and a second wholly
// above it read inconclusive on the hull; the gap between them lay above
// the margin and read regressed.
func TestJudgeDisagreeingLooks(t *testing.T) {
	j := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
	def := defs[4] // latency_p99
	if def.name != compare.LatencyP99 {
		t.Fatalf("defs[4] is %s", def.name)
	}
	mg := testMargin(def, 0.25)
	e1 := estimate{d: 0.05, se: 0.05, margin: mg, margin0: 0.25}
	e2 := estimate{d: 0.45, se: 0.05, margin: mg, margin0: 0.25}
	h1, h2 := HalfWidth(e1.se, 2*mg, DefaultAlpha, 0), HalfWidth(e2.se, 2*mg, DefaultAlpha, 0)
	if !(e1.d+h1 > mg && e1.d+h1 < e2.d-h2 && e2.d-h2 > mg) {
		t.Fatalf("the looks %v±%v and %v±%v do not straddle, then clear, the margin %v", e1.d, h1, e2.d, h2, mg)
	}
	j.look(def, e1)
	m := j.look(def, e2)
	lo, hi := math.Log1p(m.CI95[0]), math.Log1p(m.CI95[1])
	if m.Verdict != compare.Inconclusive || math.Abs(lo-(e1.d-h1)) > 1e-9 || math.Abs(hi-(e2.d+h2)) > 1e-9 {
		t.Errorf("second look: %s, ln %.4f–%.4f; want inconclusive on the hull %.4f–%.4f", m.Verdict, lo, hi, e1.d-h1, e2.d+h2)
	}
}

// TestContentionHoldsBack: B 20 % cheaper per request in every pair, but
// B's threads waited for a core 1 s per CPU second and A's 0.1 s: CPU
// per request and latency read inconclusive, naming both figures, and
// stay undecided; with the same contention they read improved.
func TestContentionHoldsBack(t *testing.T) {
	for _, c := range []struct {
		waitA, waitB float64
		want         string
	}{{0.1, 1, compare.Inconclusive}, {1.5, 1.5, compare.Inconclusive}, {0.5, 0.5, compare.Improved}} {
		tl := NewTally()
		for i := range 16 {
			b := Order(i)
			f := 1 + 0.01*float64(i%3)
			blk := Block{Build: b, Requests: 1000, Seconds: 1, CPU: 0.05 * f, P50: 0.001 * f, P99: 0.003 * f, P999: 0.005 * f}
			if b == B {
				blk.CPU, blk.P50, blk.P99, blk.P999 = 0.8*blk.CPU, 0.7*blk.P50, 0.7*blk.P99, 0.7*blk.P999
			}
			blk.Wait = blk.CPU * map[Build]float64{A: c.waitA, B: c.waitB}[b]
			tl.Blocks = append(tl.Blocks, blk)
		}
		j := NewJudge(compare.InterleavedMargins(), DefaultAlpha)
		res := j.Look(tl, 8)
		m := res.Metrics[compare.CPUPerRequest]
		if m.Verdict != c.want || (c.want == compare.Inconclusive && !strings.Contains(m.Reason, fmt.Sprintf("B's %.2f s", c.waitB))) {
			t.Errorf("waits %v/%v: CPU %s (%s); want %s", c.waitA, c.waitB, m.Verdict, m.Reason, c.want)
		}
		if _, decided := j.DecidedAt()[compare.CPUPerRequest]; decided != (c.want != compare.Inconclusive) {
			t.Errorf("waits %v/%v: CPU decided %v; want it decided only when it stands", c.waitA, c.waitB, decided)
		}
		if res.Columns == nil || !strings.Contains(res.Columns.Difference, "paired") || !strings.Contains(res.Columns.Old, "pooled") {
			t.Errorf("columns %+v; want the pooled builds and the paired difference named apart", res.Columns)
		}
	}
}
