package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// Where the growth lives, end to end: servers of our own that leak in a
// known mapping, function or class, each soaked for a few seconds.

// whereSoak soaks the server at url (process pid) with n requests at c=1,
// sampled every 50 ms with no baseline, and returns the report and its
// --out directory.
func whereSoak(t *testing.T, url string, pid int, n uint64) (*model.Report, string) {
	t.Helper()
	out := t.TempDir()
	o := runner.Options{
		Load: load.Options{
			Endpoints: []load.Endpoint{{URL: url}}, Concurrency: 1, KeepAlive: true,
			Timeout: 5 * time.Second, Requests: n,
		},
		// A fixed 50 ms interval: on a busy machine the automatic one
		// left a 3 s soak with too few samples for a verdict.
		Interval: 50 * time.Millisecond,
		Baseline: -1,
		OutDir:   out,
		Log:      zaptest.NewLogger(t),
	}
	o.Target.PID = pid
	o.Target.URL = url
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, o)
	if err != nil {
		t.Fatalf("runner.Run: %v", err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	if rep.Load == nil || rep.Load.Errors > 0 {
		t.Fatalf("load summary %+v; want no errors", rep.Load)
	}
	return rep, out
}

// topMapping checks that the RSS growth's first mapping class is want,
// with most of the growth, and returns it.
func topMapping(t *testing.T, rep *model.Report, want string) verdict.Mapping {
	t.Helper()
	rss := rep.Resources["rss"]
	if !model.Growing(rss) {
		t.Fatalf("rss %s at %.1f B/request; want it growing (%s)", rss.Verdict, rss.PerRequest, rss.Reason)
	}
	if len(rss.Mappings) == 0 {
		t.Fatalf("rss mappings: none; want %s first", want)
	}
	m := rss.Mappings[0]
	if m.Name != want || m.Share < 0.8 {
		t.Fatalf("rss mappings %+v; want %s first with 80 %% or more of the growth", rss.Mappings, want)
	}
	return m
}

// wantEvidence checks that the run kept the named files in --out DIR.
func wantEvidence(t *testing.T, rep *model.Report, out string, names ...string) {
	t.Helper()
	if rep.Where == nil {
		t.Fatal("report.where: nil; want the snapshots listed")
	}
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(out, model.EvidenceDir, n)); err != nil || st.Size() == 0 {
			t.Errorf("evidence %s: %v; want it kept in --out DIR/evidence", n, err)
		}
	}
}

// withinShare checks got against truth to ±tol (a fraction).
func withinShare(t *testing.T, what string, got, truth, tol float64) {
	t.Helper()
	if got < (1-tol)*truth || got > (1+tol)*truth {
		t.Errorf("%s = %.1f; want %.0f ± %.0f %%", what, got, truth, 100*tol)
	}
}

// The zoo's C server mallocs 100 B a request from the brk heap: the growth
// is in [heap], at 100 B per soak request.
func TestWhereCLeakIsInTheHeap(t *testing.T) {
	url, pid := startZooC(t, "--leak-bytes", "100")
	rep, out := whereSoak(t, url, pid, 60_000)
	m := topMapping(t, rep, "[heap]")
	withinShare(t, "[heap] growth per soak request", m.GrowthBytes/float64(rep.Phases.SoakRequests), 100, 0.2)
	wantEvidence(t, rep, out, "smaps.jsonl")
	if !strings.Contains(strings.Join(rep.Where.Notes, " "), "jemalloc") {
		t.Errorf("notes %q; want what would show a C server's allocation sites", rep.Where.Notes)
	}
}

// With --leak-in mmap the same server cuts its leak from 8 MiB anonymous
// mappings: the growth is in anonymous mappings, new ones of 8 MiB.
func TestWhereMmapLeakIsAnonymous(t *testing.T) {
	url, pid := startZooC(t, "--leak-bytes", "400", "--leak-in", "mmap")
	rep, _ := whereSoak(t, url, pid, 60_000)
	m := topMapping(t, rep, "anonymous")
	withinShare(t, "anonymous growth per soak request", m.GrowthBytes/float64(rep.Phases.SoakRequests), 400, 0.2)
	if m.New == nil || m.New.Count < 2 || m.New.Sizes[0].SizeBytes != 8<<20 {
		t.Errorf("new mappings %+v; want two or more of 8 MiB", m.New)
	}
}

// The Go test target keeps 1000 B a request in the Go heap from one
// function and serves net/http/pprof: the heap diff's top site is that
// function. With --pprof the target samples one allocation per 64 KiB on
// average, so 30 MB of leak carries about 5 % of sampling error: ±20 %.
func TestWhereGoLeakSiteFromPprof(t *testing.T) {
	url, pid := startTarget(t, "--heap-leak-bytes", "1000", "--pprof")
	rep, out := whereSoak(t, url, pid, 30_000)
	sites := rep.Resources["rss"].Sites
	if len(sites) == 0 || !strings.HasPrefix(sites[0].Site, "github.com/soakd/soakd/soak/demo.(*heapLeak).retainHeap (heapleak.go:") {
		t.Fatalf("rss sites %+v; want demo.(*heapLeak).retainHeap first", sites)
	}
	withinShare(t, "retainHeap bytes per request", sites[0].PerRequest, 1000, 0.2)
	if !strings.Contains(strings.Join(rep.Where.Notes, " "), "found a Go heap profile") {
		t.Errorf("notes %q; want the heap profile found on the target's port", rep.Where.Notes)
	}
	wantEvidence(t, rep, out, "heap-start.pb.gz", "heap-end.pb.gz", "smaps.jsonl")
	if top := rep.TopFinding(); !strings.Contains(top, "retainHeap") {
		t.Errorf("top finding %q; want the site", top)
	}
}

// The zoo's JVM keeps a byte[1024] a request in a static list: the class
// histograms' diff puts byte[] first, about one instance and 1040 bytes
// (with its 16-byte header) a request. One short run: the JVM and each
// jcmd are slow to start (about 20 s of this test's 25 on a busy machine);
// -short skips it, and bench/where.sh runs the same server.
func TestWhereJVMLeakIsByteArrays(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a JVM and two jcmd runs take about 25 s; bench/where.sh runs it")
	}
	url, pid := startZooScript(t, "java", "Leak.java", "--leak-bytes", "1024")
	rep, out := whereSoak(t, url, pid, 3_000)
	sites := rep.Resources["rss"].Sites
	if len(sites) == 0 || sites[0].Site != "byte[] ([B)" || sites[0].Kind != "jvm-class" {
		t.Fatalf("rss sites %+v; want byte[] ([B) first", sites)
	}
	withinShare(t, "byte[] bytes per request", sites[0].PerRequest, 1040, 0.2)
	withinShare(t, "byte[] instances per request", sites[0].ObjectsPerRequest, 1, 0.2)
	wantEvidence(t, rep, out, "class-histogram-start.txt", "class-histogram-end.txt")
}
