package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// endpointsFile writes a samples.csv of a 15-minute two-endpoint run in
// the designed mix (blocks of 10 samples, 3 s apart, favouring each
// endpoint in turn: 850 and 150 requests a sample), RSS growing 100 B a request of the
// first endpoint only, and, when named, a report.json beside it naming
// the endpoints.
func endpointsFile(t *testing.T, named bool) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	var recs []model.Record
	var c [2]uint64
	for i := range 300 {
		phase := verdict.Soak
		if i < 30 {
			phase = verdict.Warmup
		}
		fav := (i / 10) % 2
		c[fav] += 850
		c[1-fav] += 150
		rss := 50<<20 + 100*c[0] + uint64(i%7)*4096
		recs = append(recs, model.Record{
			Sample: probes.Sample{Time: start.Add(time.Duration(3*i) * time.Second), Alive: true, Incarnation: 1,
				RootPID: 42, Procs: 1, RSSValid: true, RSS: rss, FDsValid: true, FDs: 12, FDLimit: 1024, ThreadsValid: true, Threads: 4},
			Elapsed: float64(3 * i), Phase: phase, Requests: c[0] + c[1], EndpointRequests: []uint64{c[0], c[1]},
		})
	}
	f, err := os.Create(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := model.WriteCSV(f, recs); err != nil {
		t.Fatal(err)
	}
	if named {
		rep := `{"load": {"endpoints": [{"method": "GET", "url": "http://127.0.0.1:8080/s/scgi/"}, {"method": "GET", "url": "http://127.0.0.1:8080/static.html"}]}}`
		if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(rep), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f.Name()
}

func TestAnalyzeAttributesFromTheEndpointColumns(t *testing.T) {
	for _, tc := range []struct {
		named bool
		want  string
	}{
		{true, "rss by endpoint: GET /s/scgi/ leaks 100 B/request"},
		{false, "rss by endpoint: requests_0 leaks 100 B/request"},
	} {
		code, out, stderr := analyzeArgs(t, endpointsFile(t, tc.named))
		if code != exitLeak || !strings.Contains(out, tc.want) {
			t.Errorf("report.json beside: %v: exit %d; want %d and %q\n%s%s", tc.named, code, exitLeak, tc.want, out, stderr)
		}
		if !strings.Contains(out, "static.html: stable") && !strings.Contains(out, "requests_1: stable") {
			t.Errorf("the second endpoint is not stable:\n%s", out)
		}
	}
}

// The report.json beside names a garbage-collected runtime: re-analysis
// does not judge the memory's split either (docs/attribution.md).
func TestAnalyzeKeepsTheCollector(t *testing.T) {
	path := endpointsFile(t, true)
	rep := `{"load": {"endpoints": [{"method": "GET", "url": "http://127.0.0.1:8080/leak"}, {"method": "GET", "url": "http://127.0.0.1:8080/ok"}]}, "target": {"collector": "Go"}}`
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "report.json"), []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, stderr := analyzeArgs(t, path)
	if !strings.Contains(out, "GET /leak: inconclusive") || !strings.Contains(out, "not judged: Go collects garbage") || strings.Contains(out, "GET /ok: stable") {
		t.Errorf("with target.collector Go beside: want both endpoints inconclusive for the collector\n%s%s", out, stderr)
	}
}
