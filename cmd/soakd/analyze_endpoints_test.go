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

// liveHeapBeside writes a liveheap.csv beside path: a reading at the end
// of every block of endpointsFile's soak, the live heap keeping 512 B a
// request of the first endpoint.
func liveHeapBeside(t *testing.T, path string) {
	t.Helper()
	var hs []model.LiveHeap
	var c [2]float64
	for i := range 300 {
		fav := (i / 10) % 2
		c[fav] += 850
		c[1-fav] += 150
		if i%10 != 9 {
			continue
		}
		phase := verdict.Soak
		if i < 30 {
			phase = verdict.Warmup
		}
		hs = append(hs, model.LiveHeap{Elapsed: float64(3 * i), Incarnation: 1, Phase: phase, Favoured: fav,
			Bytes: 8<<20 + 512*c[0] + float64(i%3)*1000, CostSeconds: 0.02, Requests: []float64{c[0], c[1]}})
	}
	f, err := os.Create(filepath.Join(filepath.Dir(path), model.LiveHeapFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := model.WriteLiveHeap(f, hs); err != nil {
		t.Fatal(err)
	}
}

// A Go run with its live heap read at the blocks' ends: re-analysis
// splits the memory on the liveheap.csv beside (docs/attribution.md);
// a broken one is an error that names its line.
func TestAnalyzeReadsTheLiveHeapBeside(t *testing.T) {
	path := endpointsFile(t, true)
	rep := `{"load": {"endpoints": [{"method": "GET", "url": "http://127.0.0.1:8080/leak"}, {"method": "GET", "url": "http://127.0.0.1:8080/ok"}]}, "target": {"collector": "Go"}}`
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "report.json"), []byte(rep), 0o644); err != nil {
		t.Fatal(err)
	}
	liveHeapBeside(t, path)
	_, out, stderr := analyzeArgs(t, path)
	if !strings.Contains(out, "GET /leak leaks 512 B/request") || !strings.Contains(out, "GET /ok: stable") || !strings.Contains(out, "split on the live heap") {
		t.Errorf("with liveheap.csv beside: want GET /leak a leak of 512 B/request and GET /ok stable, on the live heap\n%s%s", out, stderr)
	}
	lh := filepath.Join(filepath.Dir(path), model.LiveHeapFile)
	b, err := os.ReadFile(lh)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[3] = strings.Replace(lines[3], ",0.02,", ",fast,", 1)
	if err := os.WriteFile(lh, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := analyzeArgs(t, path)
	if code == exitLeak || !strings.Contains(stderr, "liveheap.csv line 4, column cost_seconds") {
		t.Errorf("a broken liveheap.csv: exit %d; want an error naming its line and column\n%s%s", code, out, stderr)
	}
}
