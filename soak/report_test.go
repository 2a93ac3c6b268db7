package soak

import (
	"strings"
	"testing"

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
	rep := &Report{
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
