package web

import (
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/sweep"
	"github.com/soakd/soakd/soak/verdict"
)

// TestSweepReport renders a sweep's page with its four charts.
func TestSweepReport(t *testing.T) {
	rep := &sweep.Report{URL: "http://127.0.0.1:8080/", Target: "pid 1",
		Knee:          sweep.Knee{Concurrency: 500, Cause: sweep.CauseFDLimit, Reason: "the fds stopped at 1023"},
		USL:           sweep.USL{Sigma: 0.01, Kappa: 1e-6, Lambda: 5, R2: 0.99, Peak: 995, OK: true},
		PerConnection: sweep.PerConnection{RSSBytes: 4096, FDs: 1, FDLimit: 1024, CeilingConnections: 1018, Levels: 3, Text: "≈ 4 KiB and 1 fds per connection"},
		Suggestion:    sweep.Suggestion{Concurrency: 200, Rate: 800, Command: "soakd run -c 200 --rate 800 -d 1h http://127.0.0.1:8080/"},
	}
	for i, n := range []int{100, 200, 500, 1100} {
		rep.Levels = append(rep.Levels, sweep.Level{Concurrency: n, Throughput: 5 * float64(min(n, 1018)), P50: 0.2, P99: 0.21 + float64(i), Max: 1.02,
			CPU: verdict.CPU{Bound: verdict.BoundIO}, Accepted: float64(min(n, 1017)), Established: float64(n), RSS: uint64(1<<20 + 4096*n), FDs: min(n+6, 1023)})
	}
	var b strings.Builder
	if err := SweepReport(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`id="sweep-throughput"`, `id="sweep-p99"`, `id="sweep-rss"`, `id="sweep-fds"`, "<code>fd_limit</code>", "soakd run -c 200", "the fds stopped at 1023", "<svg"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
