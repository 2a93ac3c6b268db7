package runner

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestOverallLetsSlowlySampledResourcesWaitTheirTurn(t *testing.T) {
	r := func(v string) verdict.Resource { return verdict.Resource{Verdict: v} }
	for _, tc := range []struct {
		name string
		rs   map[string]verdict.Resource
		want string
	}{
		{"all stable", map[string]verdict.Resource{"rss": r("stable"), "fds": r("stable")}, "clean"},
		{"pss and close_wait too few", map[string]verdict.Resource{"rss": r("stable"), "fds": r("plateau"), "pss": r("inconclusive"), "close_wait": r("inconclusive")}, "clean"},
		{"rss undecided", map[string]verdict.Resource{"rss": r("inconclusive"), "fds": r("stable")}, "inconclusive"},
		{"a pss leak counts", map[string]verdict.Resource{"rss": r("stable"), "pss": r("leak")}, "leak"},
		{"a close_wait leak counts", map[string]verdict.Resource{"rss": r("stable"), "close_wait": r("leak")}, "leak"},
		{"only slow ones", map[string]verdict.Resource{"pss": r("inconclusive")}, "inconclusive"},
	} {
		if got := overall(tc.rs); got != tc.want {
			t.Errorf("%s: overall = %q; want %q", tc.name, got, tc.want)
		}
	}
}

func TestTextReportOpensWithTheVerdictBlock(t *testing.T) {
	ttl := 3600.0
	rep := &model.Report{
		Verdict: "leak",
		Resources: map[string]verdict.Resource{
			"rss": {Verdict: "leak", Unit: "bytes", Reason: "rss +101 B/request", Limit: 1 << 30, TimeToExhaustionSeconds: &ttl},
			"fds": {Verdict: "stable", Unit: "fds", Reason: "fds stable", Limit: 1024},
		},
		CPU: verdict.CPU{Bound: "cpu", Reason: "CPU-bound: busy 94 %"},
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for i, want := range []string{"Verdict: LEAK\n", "  rss", "leak", "rss +101 B/request", "  fds", "  cpu", "CPU-bound",
		"rss reaches its limit (1.00 GiB) in 1.0 h at this rate", "fds never reaches its limit (1024 fds): not growing"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q (#%d):\n%s", want, i, out)
		}
	}
	if !strings.HasPrefix(out, "Verdict: LEAK") {
		t.Errorf("text report does not open with the verdict:\n%s", out)
	}
}

// The phases count from the load's start, which the baseline precedes.
func TestPhasesMeasureTheBaseline(t *testing.T) {
	var recs []model.Record
	add := func(el float64, p verdict.Phase, req uint64) {
		recs = append(recs, model.Record{Elapsed: el, Phase: p, Requests: req})
	}
	for i := range 4 {
		add(float64(i), verdict.Baseline, 0)
	}
	add(3, verdict.Warmup, 0)
	add(4, verdict.Warmup, 100)
	for i := range 10 {
		add(5+float64(i), verdict.Soak, 200+100*uint64(i))
	}
	add(16, verdict.Cooldown, 1100)
	add(19, verdict.Cooldown, 1100)
	want := model.Phases{BaselineSeconds: 3, WarmupSeconds: 1, WarmupRequests: 100, SoakSeconds: 10, SoakRequests: 1000, SoakSamples: 10, CooldownSeconds: 5}
	if got := phases(recs); got != want {
		t.Errorf("phases = %+v; want %+v", got, want)
	}
}

func TestTextReportSaysHowItSampled(t *testing.T) {
	rep := &model.Report{Verdict: "clean", Target: model.TargetInfo{Probed: true},
		Sampling: &model.Sampling{Auto: true, IntervalSeconds: 0.02043, MinIntervalSeconds: 0.0127, MaxIntervalSeconds: 0.05,
			ProbeCostSeconds: 85e-6, CPUShare: 0.0042}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "Sampling:          every 20.4ms (paced to the run, 12.7ms to 50ms under load); 85µs of soakd's CPU per sample, 0.42 % of a core in all"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}
