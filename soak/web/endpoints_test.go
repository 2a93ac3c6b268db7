package web

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

func TestEndpointTableShown(t *testing.T) {
	rss := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", Endpoints: []verdict.EndpointFit{
		{Endpoint: "GET /s/scgi/", Verdict: verdict.Leak, PerRequest: 101, CI95: [2]float64{96, 106}, Requests: 98826},
		{Endpoint: "GET /static.html", Verdict: verdict.Stable, PerRequest: 0.1, CI95: [2]float64{-2, 2}, Requests: 101174},
	}}
	pss := verdict.Resource{Verdict: verdict.Inconclusive, Unit: "bytes", Endpoints: []verdict.EndpointFit{
		{Endpoint: "GET /s/scgi/", Verdict: verdict.Inconclusive, Reason: "too few soak samples (4) <to split>"},
	}}
	rep := &model.Report{Verdict: verdict.Leak, Resources: map[string]verdict.Resource{"rss": rss, "pss": pss},
		Target: model.TargetInfo{Probed: true}}
	var b strings.Builder
	if err := RunReport(&b, rep, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<h3>By endpoint</h3>", "<code>GET /s/scgi/</code>", "<code>GET /static.html</code>",
		"98826", "too few soak samples (4) &lt;to split&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	one := &model.Report{Verdict: verdict.Leak, Resources: map[string]verdict.Resource{"rss": {Verdict: verdict.Leak, Unit: "bytes"}},
		Target: model.TargetInfo{Probed: true}}
	b.Reset()
	if err := RunReport(&b, one, PageOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "By endpoint") {
		t.Errorf("a run of one endpoint shows the By endpoint table")
	}
}
