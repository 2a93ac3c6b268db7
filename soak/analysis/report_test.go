package analysis

import (
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
		if got := Overall(tc.rs); got != tc.want {
			t.Errorf("%s: overall = %q; want %q", tc.name, got, tc.want)
		}
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
