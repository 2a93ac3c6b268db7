package runner_test

import (
	"context"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/soakd/soakd/internal/soaktest"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

// attributeSoak soaks a two-endpoint mix (paths, weight 1 each) of the
// server at url (process pid), whose first page leaks and whose second
// does not, at soakd's defaults but for a bounded -n, and returns the
// report and its --out.
func attributeSoak(t *testing.T, url string, pid int, n uint64, paths ...string) (*model.Report, string) {
	t.Helper()
	return attributeSoakWith(t, url, pid, n, nil, paths...)
}

// attributeSoakWith is attributeSoak with tune's changes to the options
// (nil: none).
func attributeSoakWith(t *testing.T, url string, pid int, n uint64, tune func(*runner.Options), paths ...string) (*model.Report, string) {
	t.Helper()
	base := strings.TrimSuffix(url, "/")
	out := t.TempDir()
	o := runner.Options{
		Load: load.Options{
			Endpoints:   []load.Endpoint{{Weight: 1, URL: base + paths[0]}, {Weight: 1, URL: base + paths[1]}},
			Concurrency: 1, KeepAlive: true, Timeout: 5 * time.Second,
			Requests: n, Duration: 60 * time.Second,
		},
		OutDir: out,
		Log:    zaptest.NewLogger(t),
	}
	o.Target.PID, o.Target.URL = pid, url
	if tune != nil {
		tune(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := runner.Run(ctx, o)
	if err != nil {
		t.Fatalf("runner.Run: %v", err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	t.Logf("report:\n%s", b.String())
	if rep.Load.Errors > 0 {
		t.Fatalf("%d load errors; want none", rep.Load.Errors)
	}
	return rep, out
}

// The Cherokee case: a static page and a dynamic page soaked together,
// the dynamic one leaking 100 B a request in [heap]. The designed mix
// must name the dynamic page, within ±20 % of its truth, and call the
// static one stable, from a single run.
func TestAttributeNamesTheLeakingEndpoint(t *testing.T) {
	url, pid := startZooC(t, "--leak-bytes", "100", "--leak-path", "/s/")
	rep, out := attributeSoak(t, url, pid, 150_000, "/s/scgi/", "/static.html")
	wantAttributed(t, rep, 100, "GET /s/scgi/", "GET /static.html")
	head, err := os.ReadFile(filepath.Join(out, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if line, _, _ := strings.Cut(string(head), "\n"); !strings.HasSuffix(line, ",requests_0,requests_1") {
		t.Errorf("samples.csv header ends %q; want ,requests_0,requests_1", line[max(0, len(line)-40):])
	}
	var b strings.Builder
	rep.WriteText(&b)
	if want := "rss by endpoint: GET /s/scgi/"; !strings.Contains(b.String(), want) {
		t.Errorf("report text lacks %q", want)
	}
}

// wantAttributed checks that rss puts the first endpoint's growth within
// ±20 % of truth, its interval clear of zero, and calls the second
// stable. The first is a leak when rss as a whole is one; on a busy
// machine the whole (fitted per request of either endpoint, whose growth
// the designed mix makes uneven) can stay inconclusive, and the endpoint
// is then capped to inconclusive with its figures.
func wantAttributed(t *testing.T, rep *model.Report, truth float64, leaky, clean string) {
	t.Helper()
	rss := rep.Resources["rss"]
	if len(rss.Endpoints) != 2 {
		t.Fatalf("rss endpoints = %+v; want 2", rss.Endpoints)
	}
	dyn, static := rss.Endpoints[0], rss.Endpoints[1]
	if dyn.Endpoint != leaky || static.Endpoint != clean {
		t.Errorf("endpoints named %q and %q; want %s and %s", dyn.Endpoint, static.Endpoint, leaky, clean)
	}
	if dyn.PerRequest < 0.8*truth || dyn.PerRequest > 1.2*truth || dyn.CI95[0] <= 0 {
		t.Errorf("%s: %.1f B/request (CI %v); want %.0f B ± 20 %%, its interval above 0", leaky, dyn.PerRequest, dyn.CI95, truth)
	}
	want := verdict.Inconclusive
	if rss.Verdict == verdict.Leak {
		want = verdict.Leak
	}
	if dyn.Verdict != want {
		t.Errorf("%s: %s; want %s with rss %s (%s)", leaky, dyn.Verdict, want, rss.Verdict, dyn.Reason)
	}
	if static.Verdict != verdict.Stable {
		t.Errorf("%s: %s %.1f B/request (CI %v); want stable (%s)", clean, static.Verdict, static.PerRequest, static.CI95, static.Reason)
	}
}

// A Go server whose / keeps 512 B a request in its heap and whose
// /static keeps nothing, serving its heap profile: its RSS grows while
// the heap fills with either page's garbage (the RSS split read /static a
// leak of 370 B/request, CI 140–599, and without a heap profile it is
// not judged), so soakd reads the live heap at each block's end
// (heap?gc=1) and splits that: / within 25 % of its 512 B and its
// interval clear of zero, /static's interval holding zero. The readings
// are kept in liveheap.csv, and soakd analyze reads them back.
func TestAttributeOnAGoServerReadsTheLiveHeap(t *testing.T) {
	url, pid := startTarget(t, "--heap-leak-bytes", "512", "--pprof")
	rep, out := attributeSoak(t, url, pid, 200_000, "/", "/static")
	if rep.Target.Collector != "Go" {
		t.Errorf("target.collector = %q; want Go", rep.Target.Collector)
	}
	rss, leaky, clean := liveHeapSplit(t, rep, out, 512, 0.1)
	// the leak's allocation site, split: / keeps its 512 B there, /static
	// none (the profile samples one allocation per 64 KiB: ±10 % a run)
	if len(rss.Sites) == 0 || !strings.Contains(rss.Sites[0].Site, "retainHeap") || len(rss.Sites[0].Endpoints) != 2 {
		t.Fatalf("rss sites = %+v; want retainHeap first, split between the 2 endpoints", rss.Sites)
	}
	site := rss.Sites[0].Endpoints
	if site[0].PerRequest < 0.6*512 || site[0].PerRequest > 1.4*512 || math.Abs(site[1].PerRequest) > 0.25*512 {
		t.Errorf("retainHeap by endpoint: %+v; want %s 512 B ± 40 %% and %s within ±128 B of 0", site, leaky.Endpoint, clean.Endpoint)
	}
}

// What the zoo's JVM keeps per request of its leaking page, and the
// requests its test soaks: a byte[512] costs 528 B with its header, and
// its slot in the list about 6 B more (measured: the class histograms'
// total before and after 50 000 requests of /leak, 533.9 B a request);
// the readings come one per young collection, about every 6 500
// requests of this server's garbage under the default heap.
const (
	jvmTruth    = 534.0
	jvmRequests = 100_000
)

// The zoo's JVM (Leak.java) keeping a byte[512] a request on /leak and
// nothing on /ok: its RSS follows the committed heap, which the collector
// grows in steps whatever page is served, so the RSS split is not judged.
// soakd reads the heap it keeps after each young collection (survivors
// and old generation) from its hsperfdata file at every sample, and
// splits that, the designed mix's blocks spanning 3 collections each:
// /leak within 25 % of what a kept byte[512] costs with its list slot,
// /ok no leak and near zero. Skipped without java.
func TestAttributeOnAJVMReadsItsHeapCounters(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skipf("java is not installed (.ci/run installs default-jdk-headless): %v", err)
	}
	url, pid := startZooScript(t, "java", "Leak.java", "--leak-bytes", "512", "--leak-path", "/leak")
	rep, out := attributeSoak(t, url, pid, jvmRequests, "/leak", "/ok")
	if rep.Target.Collector != "JVM" {
		t.Errorf("target.collector = %q; want JVM", rep.Target.Collector)
	}
	liveHeapSplit(t, rep, out, jvmTruth, 0.25)
}

// What the zoo's Node server keeps per request of its leaking page: a
// Buffer.alloc(512) is 512 B outside the V8 heap and its wrapper with its
// slot in the array about 193 B inside it (measured: 100 000 of them
// pushed onto an array in node 20.20, the heap's used bytes and
// process.memoryUsage().external after a full collection, before and
// after: 193.4 + 512.0 B a Buffer).
const nodeTruth = 705.0

// nodeRequests is what the Node split's test soaks: the live heap is read
// once per block of the designed mix, and on a quiet machine the zoo's
// Node server served 100 000 requests in 9 s, 8 readings, too few to
// split (the test skipped, the claim untested); 300 000 give about
// three times as many.
const nodeRequests = 300_000

// The zoo's Node server (leak.js) keeping a Buffer of 512 B a request on
// /leak and nothing on /ok, started with its inspector on a free loopback
// port: its RSS split is not judged (Node collects garbage), so with
// Options.NodeInspect soakd reads the live heap over the inspector at
// each block's end (a forced collection, then the heap's used bytes and
// the Buffers' external memory) and splits that: /leak within 25 % of
// what a kept Buffer costs, its interval clear of zero; /ok no leak and
// near zero. Skipped without node.
func TestAttributeOnANodeServerReadsTheLiveHeapOverItsInspector(t *testing.T) {
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed (.ci/run installs nodejs): %v", err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "zoo", "leak.js"))
	if err != nil {
		t.Fatal(err)
	}
	srv := soaktest.StartServer(t, bin, "--inspect=127.0.0.1:0", script, "--max-lifetime", "300", "--leak-bytes", "512", "--leak-path", "/leak")
	m := regexp.MustCompile(`Debugger listening on ws://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(srv.Stderr.String())
	if m == nil {
		t.Fatalf("node's stderr has no \"Debugger listening on ws://127.0.0.1:PORT/\" line:\n%s", srv.Stderr.String())
	}
	rep, out := attributeSoakWith(t, srv.URL, srv.PID, nodeRequests, func(o *runner.Options) { o.NodeInspect = m[1] }, "/leak", "/ok")
	if rep.Target.Collector != "Node" {
		t.Errorf("target.collector = %q; want Node", rep.Target.Collector)
	}
	liveHeapSplit(t, rep, out, nodeTruth, 0.1)
}

// --node-inspect naming no inspector (a closed loopback port; the server
// runs without --inspect): one log line says the inspector cannot be
// read, no live heap is written, and the endpoints stay not judged, their
// reason naming the flag.
func TestAttributeOnANodeServerWithoutItsInspectorIsNotJudged(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed (.ci/run installs nodejs): %v", err)
	}
	url, pid := startZooScript(t, "node", "leak.js", "--leak-bytes", "512", "--leak-path", "/leak")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	core, logs := observer.New(zapcore.WarnLevel)
	rep, out := attributeSoakWith(t, url, pid, 30_000, func(o *runner.Options) {
		o.NodeInspect = closed
		o.Log = zap.New(core)
	}, "/leak", "/ok")
	warned := logs.FilterMessageSnippet("Node inspector cannot be read").Len()
	if warned != 1 {
		t.Errorf("%d log lines say the Node inspector cannot be read; want 1 (all warnings: %v)", warned, logs.All())
	}
	if _, err := os.Stat(filepath.Join(out, model.LiveHeapFile)); err == nil {
		t.Errorf("%s written; want none without a live heap", model.LiveHeapFile)
	}
	rss := rep.Resources["rss"]
	if len(rss.Endpoints) != 2 {
		t.Fatalf("rss endpoints = %+v; want 2", rss.Endpoints)
	}
	for _, e := range rss.Endpoints {
		if e.Source == verdict.LiveHeapSource || !strings.Contains(e.Reason, "not judged: Node collects garbage") || !strings.Contains(e.Reason, "--node-inspect") {
			t.Errorf("%s: %s, source %q, %q; want not judged, the reason naming --node-inspect", e.Endpoint, e.Verdict, e.Source, e.Reason)
		}
	}
}

// liveHeapSplit reads a run's live-heap readings (logging each) and
// checks its two-endpoint split on them: every endpoint read from the
// live heap, the first (the leaking one) within 25 % of truth with its
// interval above 0, the second no leak and within cleanShare of truth
// from 0 (its interval held 0 in 9 of 10 runs or more in every runtime's
// bench/attribute.sh rows, docs/attribution.md: a single run asks less).
// A starved machine can end the soak by its time bound before the
// designed mix's blocks give the readings a split needs, and the report
// says so (under bench/busy.sh with the studies beside it: 98 814
// requests of the Go target, 10 readings in the soak, the target waiting
// for a core 125 % of the time): that run is skipped with its figures.
func liveHeapSplit(t *testing.T, rep *model.Report, out string, truth, cleanShare float64) (rss verdict.Resource, leaky, clean verdict.EndpointFit) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, model.LiveHeapFile))
	if err != nil {
		t.Fatalf("no live-heap readings: %v", err)
	}
	defer f.Close()
	hs, err := model.ReadLiveHeap(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		t.Logf("live heap at %.1f s (%s, block of %d ended): %.0f B, requests %v, read in %.3f s", h.Elapsed, model.PhaseName(h.Phase), h.Favoured, h.Bytes, h.Requests, h.CostSeconds)
	}
	rss = rep.Resources["rss"]
	if len(rss.Endpoints) != 2 {
		t.Fatalf("rss endpoints = %+v; want 2", rss.Endpoints)
	}
	leaky, clean = rss.Endpoints[0], rss.Endpoints[1]
	if strings.Contains(leaky.Reason, "too few live-heap readings") {
		t.Skipf("the split was not judged: %s (%d requests in %.0f s; %d live-heap readings in all)", leaky.Reason, rep.Load.Requests, rep.Load.DurationSeconds, len(hs))
	}
	for _, e := range rss.Endpoints {
		if e.Source != verdict.LiveHeapSource {
			t.Errorf("%s: source %q (%s, %q); want %q", e.Endpoint, e.Source, e.Verdict, e.Reason, verdict.LiveHeapSource)
		}
	}
	if leaky.PerRequest < 0.75*truth || leaky.PerRequest > 1.25*truth || leaky.CI95[0] <= 0 {
		t.Errorf("%s: %.0f B/request (CI %.0f–%.0f); want %.0f B ± 25 %%, its interval above 0", leaky.Endpoint, leaky.PerRequest, leaky.CI95[0], leaky.CI95[1], truth)
	}
	if math.Abs(clean.PerRequest) > cleanShare*truth || clean.Verdict == verdict.Leak {
		t.Errorf("%s: %s %.1f B/request (CI %.1f–%.1f); want no leak, within ±%.0f B of 0", clean.Endpoint, clean.Verdict, clean.PerRequest, clean.CI95[0], clean.CI95[1], cleanShare*truth)
	}
	return rss, leaky, clean
}
