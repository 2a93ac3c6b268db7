package daemon

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/load"
	soakmodel "github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics.golden from the metrics served now")

const metricsGolden = "testdata/metrics.golden"

// TestMetricsGolden serves /metrics from the registry the daemon builds
// (its metrics, the store's, the alert manager's and the handler's own),
// fed fixed inputs: job "web" in the middle of a run and job "api" after
// one. Its series (name, type and label set; not values) must match
// testdata/metrics.golden, so that a renamed or dropped series fails here
// before it breaks someone's dashboard or alert rule. The Go and process
// collectors' series, which vary by Go version and platform, are left
// out. After a deliberate change, run go test -run TestMetricsGolden
// -update and review the diff.
func TestMetricsGolden(t *testing.T) {
	reg := goldenRegistry(t)
	got := describeSeries(t, scrape(t, reg))
	if *update {
		if err := os.MkdirAll(filepath.Dir(metricsGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(metricsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(metricsGolden)
	if err != nil {
		t.Fatalf("%v; run go test -run TestMetricsGolden -update to create it", err)
	}
	if want := string(b); got != want {
		t.Errorf("/metrics series differ from %s (- golden, + served):\n%s\nIf the change is deliberate, run go test -run TestMetricsGolden -update and review the diff.",
			metricsGolden, lineDiff(want, got))
	}
}

// goldenRegistry builds the daemon's registry as New does and feeds it.
func goldenRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newStoreHealth(reg); err != nil {
		t.Fatal(err)
	}
	hook := alerts.NewWebhook("hook", "http://127.0.0.1:9/", nil, alerts.HTTPOptions{})
	mgr, err := alerts.NewManager(alerts.ManagerOptions{Sinks: map[string]alerts.Sink{"hook": hook}, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mgr.Close(t.Context()) })
	reg.MustRegister(firingCollector{active: mgr.Active})
	mgr.Fire(alerts.LeakAlert(alerts.Leak{Job: "api", Resource: "pss", Unit: "bytes", RunID: "1"}))
	for _, job := range []string{"web", "api"} {
		m.initJob(job)
		m.startRun(job)
		m.loadObserver(job)(load.Result{Status: 200, Latency: time.Millisecond})
		cpu := &cpuTracker{}
		for i := range 2 {
			m.observeRecord(job, goldenRecord(i), cpu)
		}
		m.observeAnalysis(job, goldenReport())
	}
	// As a run's end does (runs.go): the target's death, then the end.
	m.lastDied.WithLabelValues("api").Set(0)
	m.observeEnd("api", resultOK, verdict.OverallLeak, 1.7e9)
	return reg
}

// goldenRecord is a sample with every resource read.
func goldenRecord(i int) soakmodel.Record {
	return soakmodel.Record{Sample: probes.Sample{
		Alive: true, Procs: 2, RSSValid: true, RSS: 1 << 20, SmapsValid: true, PSS: 900 << 10, USS: 800 << 10,
		CgroupValid: true, MemAnon: 700 << 10, FDsValid: true, FDs: 12, FDLimit: 1024, ThreadsValid: true, Threads: 4,
		TCPValid: true, TCPCloseWait: 1, CPUUser: float64(i), CPUSystem: float64(i) / 2,
	}}
}

// goldenReport is an analysis with a leak, a time to exhaustion and a
// CPU cost drift.
func goldenReport() *soakmodel.Report {
	rep := leakReport()
	rep.CPU.Bound = "cpu"
	rep.CPU.Throughput = 100
	rep.CPU.Cost.Windows = 8
	return rep
}

// scrape serves reg's /metrics as the daemon does and parses the text.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	t.Cleanup(srv.Close)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return mfs
}

// varying are label values that change with the build, not with soakd.
var varying = map[string]bool{"goversion": true}

// describeSeries writes one line per family (name and type) and one per
// series (its labels, and a histogram's number of buckets), sorted,
// without values. The Go and process collectors' families are left out.
func describeSeries(t *testing.T, mfs map[string]*dto.MetricFamily) string {
	t.Helper()
	names := make([]string, 0, len(mfs))
	for n := range mfs {
		if !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		mf := mfs[n]
		fmt.Fprintf(&b, "%s %s\n", n, strings.ToLower(mf.GetType().String()))
		var series []string
		for _, m := range mf.GetMetric() {
			series = append(series, "  "+n+labelSet(m))
		}
		sort.Strings(series)
		b.WriteString(strings.Join(slices.Compact(series), "\n") + "\n")
	}
	return b.String()
}

func labelSet(m *dto.Metric) string {
	var ls []string
	for _, l := range m.GetLabel() {
		v := l.GetValue()
		if varying[l.GetName()] {
			v = "*"
		}
		ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), v))
	}
	sort.Strings(ls)
	s := ""
	if len(ls) > 0 {
		s = "{" + strings.Join(ls, ",") + "}"
	}
	if h := m.GetHistogram(); h != nil {
		s += fmt.Sprintf(" (%d buckets)", len(h.GetBucket()))
	}
	return s
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
