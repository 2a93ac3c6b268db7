package model

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

func TestEndpointsLine(t *testing.T) {
	res := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", Endpoints: []verdict.EndpointFit{
		{Endpoint: "GET /s/scgi/", Verdict: verdict.Leak, PerRequest: 101, CI95: [2]float64{96, 106}},
		{Endpoint: "GET /static.html", Verdict: verdict.Stable, PerRequest: 0.2, CI95: [2]float64{-3, 3}},
		{Endpoint: "POST /form", Verdict: verdict.Inconclusive, PerRequest: 40, CI95: [2]float64{-20, 100}},
		{Endpoint: "GET /rare", Verdict: verdict.Inconclusive, Reason: "too few soak samples"},
	}}
	want := "GET /s/scgi/ leaks 101 B/request (CI 96 – 106 B); GET /static.html: stable; " +
		"POST /form: inconclusive, 40 B/request (CI -20 – 100 B); GET /rare: inconclusive (too few soak samples)"
	if got := EndpointsLine(res); got != want {
		t.Errorf("EndpointsLine:\n got %s\nwant %s", got, want)
	}
	few := verdict.Resource{Verdict: verdict.Leak, Unit: "bytes", Endpoints: []verdict.EndpointFit{
		{Endpoint: "GET /a", Verdict: verdict.Inconclusive, Reason: "too few soak samples (4)"},
		{Endpoint: "GET /b", Verdict: verdict.Inconclusive, Reason: "too few soak samples (4)"},
	}}
	if got, want := EndpointsLine(few), "not split: too few soak samples (4)"; got != want {
		t.Errorf("EndpointsLine with one reason for all = %q; want %q", got, want)
	}
	rep := &Report{Resources: map[string]verdict.Resource{"rss": res, "fds": {Verdict: verdict.Stable, Unit: "fds",
		Endpoints: []verdict.EndpointFit{{Endpoint: "GET /a", Verdict: verdict.Stable}, {Endpoint: "GET /b", Verdict: verdict.Stable}}}}}
	var b strings.Builder
	rep.writeEndpoints(&b)
	if got := b.String(); !strings.HasPrefix(got, "  rss by endpoint: GET /s/scgi/ leaks") || strings.Contains(got, "fds by endpoint") {
		t.Errorf("writeEndpoints wrote:\n%s\nwant the rss line only (fds is stable everywhere)", got)
	}
}
