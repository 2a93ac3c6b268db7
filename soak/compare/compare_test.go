package compare_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		ci   [2]float64
		want string
	}{
		{[2]float64{17, 40}, compare.Regressed},
		{[2]float64{-10, 10}, compare.Same},
		{[2]float64{-16, 16}, compare.Same},
		{[2]float64{-40, -1}, compare.Inconclusive}, // better, not shown better by the margin
		{[2]float64{-40, -17}, compare.Improved},
		{[2]float64{-5, 20}, compare.Inconclusive},
		{[2]float64{-20, 5}, compare.Inconclusive},
		{[2]float64{math.NaN(), 5}, compare.Inconclusive},
	} {
		if got := compare.Judge(c.ci, 16); got != c.want {
			t.Errorf("Judge(%v, 16) = %s; want %s", c.ci, got, c.want)
		}
	}
}

// TestSlopeDifference: symmetric intervals give the difference ± the
// errors in quadrature; an asymmetric one gives each side its own.
func TestSlopeDifference(t *testing.T) {
	old := compare.Slope{Unit: "bytes", PerRequest: 10, CI95: [2]float64{7, 13}}
	cur := compare.Slope{Unit: "bytes", PerRequest: 130, CI95: [2]float64{126, 150}}
	d, ci := compare.SlopeDifference(old, cur)
	if d != 120 {
		t.Errorf("difference = %v; want 120", d)
	}
	if lo := 120 - math.Hypot(4, 3); math.Abs(ci[0]-lo) > 1e-9 {
		t.Errorf("lower end = %v; want %v", ci[0], lo)
	}
	if hi := 120 + math.Hypot(20, 3); math.Abs(ci[1]-hi) > 1e-9 {
		t.Errorf("upper end = %v; want %v", ci[1], hi)
	}
	m := compare.CompareSlopes(old, cur, compare.DefaultMargins())
	if m.Verdict != compare.Regressed || m.Margin != 16 {
		t.Errorf("verdict %s, margin %v; want regressed, 16", m.Verdict, m.Margin)
	}
	big := compare.Slope{Unit: "bytes", PerRequest: 1000, CI95: [2]float64{990, 1010}}
	if m := compare.CompareSlopes(big, big, compare.DefaultMargins()); m.Margin != 250 || m.Verdict != compare.Same {
		t.Errorf("a leak against itself: margin %v verdict %s; want 250, same", m.Margin, m.Verdict)
	}
}

func TestOverall(t *testing.T) {
	ms := map[string]compare.Metric{
		"a": {Verdict: compare.Same}, "b": {Verdict: compare.Improved}, "c": {Verdict: compare.Unjudged},
	}
	if got := compare.Overall(ms); got != compare.Same {
		t.Errorf("Overall = %s; want same", got)
	}
	ms["d"] = compare.Metric{Verdict: compare.Inconclusive}
	if got := compare.Overall(ms); got != compare.Inconclusive {
		t.Errorf("Overall = %s; want inconclusive", got)
	}
	ms["e"] = compare.Metric{Verdict: compare.Regressed}
	if got := compare.Overall(ms); got != compare.Regressed {
		t.Errorf("Overall = %s; want regressed", got)
	}
}

// TestJSON: a figure without a value is null, and reads back as NaN.
func TestJSON(t *testing.T) {
	r := compare.Result{Verdict: compare.Inconclusive, Metrics: map[string]compare.Metric{
		compare.LatencyP99: {Unit: "seconds", Old: 0.002, New: math.NaN(), Difference: math.NaN(),
			CI95: [2]float64{math.NaN(), math.NaN()}, Relative: true, Margin: 0.1, Verdict: compare.Inconclusive},
	}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"ci95":[null,null]`) || !strings.Contains(s, `"old":0.002`) {
		t.Errorf("JSON = %s; want ci95 [null,null] and old 0.002", s)
	}
	var back compare.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if m := back.Metrics[compare.LatencyP99]; !math.IsNaN(m.CI95[0]) || m.Old != 0.002 {
		t.Errorf("read back %+v; want NaN interval, old 0.002", m)
	}
}

func TestMarginsValidate(t *testing.T) {
	m := compare.DefaultMargins()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.CPU = -1
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "margins.cpu") {
		t.Errorf("Validate = %v; want an error naming margins.cpu", err)
	}
}

// TestContentionGuard: a CPU regression between runs whose contention
// differed, or on a busy machine (a wait of 1 s or more per CPU second),
// reads inconclusive with the figures; on a quiet machine, or with the
// same contention under 1 s, it stands.
func TestContentionGuard(t *testing.T) {
	blocks := func(cpu float64) []compare.Block {
		bs := make([]compare.Block, 10)
		for i := range bs {
			bs[i] = compare.Block{Seconds: 1, Requests: 1000, CPUSeconds: cpu * (1 + 0.01*float64(i%3))}
		}
		return bs
	}
	for _, c := range []struct {
		old, cur float64
		want     string
	}{
		{math.NaN(), math.NaN(), compare.Regressed},
		{0.05, 0.15, compare.Regressed}, // quiet: below the floor
		{0.6, 0.7, compare.Regressed},
		{0.5, 0.9, compare.Inconclusive}, // differed
		{1.1, 1.2, compare.Inconclusive}, // busy
	} {
		res := compare.Compare(compare.Run{Blocks: blocks(0.1), Contention: c.old}, compare.Run{Blocks: blocks(0.13), Contention: c.cur},
			compare.Options{Margins: compare.DefaultMargins(), Seed: 1})
		m := res.Metrics[compare.CPUPerRequest]
		if m.Verdict != c.want || (c.want == compare.Inconclusive && !strings.Contains(m.Reason, fmt.Sprintf("%.2f s in the new", c.cur))) {
			t.Errorf("contention %v → %v: CPU %s (%s); want %s", c.old, c.cur, m.Verdict, m.Reason, c.want)
		}
	}
}

// A report made before PSS was judged on its anonymous part (no series:
// the whole, pss_bytes) is not compared with one judged on pss_anon_bytes:
// the slopes are of different series, and the difference would be the
// other processes' shares, not the build's.
func TestSeriesMustMatch(t *testing.T) {
	old := &model.Report{Resources: map[string]verdict.Resource{
		"pss": {Unit: "bytes", PerRequest: 100, CI95: [2]float64{90, 110}},
		"rss": {Unit: "bytes", PerRequest: 100, CI95: [2]float64{90, 110}},
	}}
	cur := &model.Report{Resources: map[string]verdict.Resource{
		"pss": {Unit: "bytes", Series: "pss_anon_bytes", PerRequest: 100, CI95: [2]float64{90, 110}},
		"rss": {Unit: "bytes", PerRequest: 100, CI95: [2]float64{90, 110}},
	}}
	res := compare.Compare(compare.FromReport(old), compare.FromReport(cur), compare.Options{Margins: compare.DefaultMargins()})
	pss := res.Metrics["pss_per_request"]
	if pss.Verdict != compare.Inconclusive || !strings.Contains(pss.Reason, "pss_bytes, then pss_anon_bytes") {
		t.Errorf("pss = %s (%s); want inconclusive, naming both series", pss.Verdict, pss.Reason)
	}
	if rss := res.Metrics["rss_per_request"]; rss.Verdict != compare.Same {
		t.Errorf("rss = %s (%s); want same", rss.Verdict, rss.Reason)
	}
	// Two reports of the same soakd compare as before.
	old.Resources["pss"] = cur.Resources["pss"]
	res = compare.Compare(compare.FromReport(old), compare.FromReport(cur), compare.Options{Margins: compare.DefaultMargins()})
	if pss := res.Metrics["pss_per_request"]; pss.Verdict != compare.Same {
		t.Errorf("same series: pss = %s (%s); want same", pss.Verdict, pss.Reason)
	}
}

// TestZeroRunsReadNoNaN: a run that made no requests (an interrupted run
// cut short before its load, a target that never answered) compared with
// one that did, or with another such run, is inconclusive in words: no
// NaN or Inf in any reason or cell (the daemon's /compare page showed
// "[+NaN %, +NaN %]").
func TestZeroRunsReadNoNaN(t *testing.T) {
	blocks := func(n int, requests, cpu float64) []compare.Block {
		bs := make([]compare.Block, n)
		for i := range bs {
			bs[i] = compare.Block{Seconds: 60, Requests: requests, CPUSeconds: cpu, P50: 0.001, P99: 0.004, Start: 60 * float64(i)}
			if requests == 0 {
				bs[i].P50, bs[i].P99 = 0, 0
			}
		}
		return bs
	}
	busy := compare.Run{Blocks: blocks(12, 6000, 3), Requests: 72000}
	idle := compare.Run{Blocks: blocks(12, 0, 0)}
	for _, c := range []struct {
		name     string
		old, cur compare.Run
	}{
		{"no requests, then some", idle, busy},
		{"some, then none", busy, idle},
		{"none either time", idle, idle},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := compare.Compare(c.old, c.cur, compare.Options{})
			var b strings.Builder
			if err := res.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, n := range res.Names() {
				cells := res.Metrics[n].Cells()
				b.WriteString(strings.Join([]string{cells.Old, cells.New, cells.Difference, cells.CI95, cells.Margin}, " "))
			}
			if out := b.String(); strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
				t.Errorf("comparison reads NaN or Inf:\n%s", out)
			}
		})
	}
}
