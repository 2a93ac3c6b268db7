package daemon

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

func TestCPUTracker(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readings  [][2]float64 // user, system
		wantTotal [2]float64
	}{
		{"first reading is the baseline", [][2]float64{{5, 2}}, [2]float64{0, 0}},
		{"growth", [][2]float64{{5, 2}, {6, 2.5}, {8, 3}}, [2]float64{3, 1}},
		{"restart counts from zero", [][2]float64{{5, 2}, {7, 3}, {0.5, 0.25}, {1, 0.5}}, [2]float64{3, 1.5}},
		{"no change", [][2]float64{{1, 1}, {1, 1}}, [2]float64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr cpuTracker
			var got [2]float64
			for _, r := range tc.readings {
				du, ds := tr.deltas(r[0], r[1])
				if du < 0 || ds < 0 {
					t.Fatalf("deltas(%v) = %g, %g; want >= 0", r, du, ds)
				}
				got[0] += du
				got[1] += ds
			}
			if got != tc.wantTotal {
				t.Errorf("total = %v; want %v", got, tc.wantTotal)
			}
		})
	}
}

func newTestMetrics(t *testing.T) (*metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg, "test")
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

func TestLoadObserver(t *testing.T) {
	m, _ := newTestMetrics(t)
	obs := m.loadObserver("j")
	for _, r := range []load.Result{
		{Status: 200, Latency: time.Millisecond},
		{Status: 204},
		{Status: 404, Cause: load.CauseStatus},
		{Status: 0, Cause: load.CauseTimeout},
		{Status: 0, Cause: "something new"},
		{Status: 999},
	} {
		obs(r)
	}
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{m.requests.WithLabelValues("j", "2xx"), 2},
		{m.requests.WithLabelValues("j", "4xx"), 1},
		{m.requests.WithLabelValues("j", codeClassNone), 3},
		{m.reqErrors.WithLabelValues("j", load.CauseStatus), 1},
		{m.reqErrors.WithLabelValues("j", load.CauseTimeout), 1},
		{m.reqErrors.WithLabelValues("j", load.CauseOther), 1},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%s = %g; want %g", metricDesc(tc.c), got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(m.duration); n != 1 {
		t.Errorf("duration histograms = %d; want 1", n)
	}
}

func metricDesc(c prometheus.Collector) string {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return (<-ch).String()
}

func TestObserveAnalysis(t *testing.T) {
	m, _ := newTestMetrics(t)
	tte := 3600.0
	rep := &model.Report{
		Resources: map[string]verdict.Resource{
			"rss": {Verdict: verdict.Leak, PerRequest: 2048, PerHour: 1 << 20, TimeToExhaustionSeconds: &tte},
			"fds": {Verdict: verdict.Stable},
		},
		CPU: verdict.CPU{Bound: "io"},
	}
	m.observeAnalysis("j", rep)
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{m.slopeReq.WithLabelValues("j", "rss"), 2048},
		{m.slopeHour.WithLabelValues("j", "rss"), 1 << 20},
		{m.leak.WithLabelValues("j", "rss"), 1},
		{m.leak.WithLabelValues("j", "fds"), 0},
		{m.tte.WithLabelValues("j", "rss"), 3600},
		{m.cpuBound.WithLabelValues("j", "io"), 1},
		{m.cpuBound.WithLabelValues("j", "cpu"), 0},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%s = %g; want %g", metricDesc(tc.c), got, tc.want)
		}
	}
	rep.Resources["rss"] = verdict.Resource{Verdict: verdict.Stable}
	m.observeAnalysis("j", rep)
	if n := testutil.CollectAndCount(m.tte); n != 0 {
		t.Errorf("time to exhaustion series after it became never = %d; want 0 (absent)", n)
	}
	m.observeEnd("j", resultOK, verdict.OverallClean, 1e9)
	if got := testutil.ToFloat64(m.lastVerdict.WithLabelValues("j", verdict.OverallClean)); got != 1 {
		t.Errorf("last verdict clean = %g; want 1", got)
	}
	m.dropJob("j")
	if n := testutil.CollectAndCount(m.lastVerdict) + testutil.CollectAndCount(m.slopeReq); n != 0 {
		t.Errorf("series left after dropJob = %d; want 0", n)
	}
}

// TestJobsAndReload runs a daemon whose jobs never fire: the jobs API shows
// the next tick in each job's timezone, and Reload adds, removes and
// changes jobs, or fails and changes nothing.
func TestJobsAndReload(t *testing.T) {
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	dir := t.TempDir()
	yaml := configYAML(dir, "", jobSpec{name: "tokyo", schedule: "0 2 * * *", target: tg}, jobSpec{name: "gone", target: tg})
	yaml = strings.Replace(yaml, "max_duration: 5m\n", "max_duration: 5m\n    timezone: Asia/Tokyo\n", 1)
	d := startDaemon(t, parseConfig(t, yaml), Options{})
	jobs := d.Jobs()
	if len(jobs) != 2 || jobs[0].Next == nil {
		t.Fatalf("jobs = %+v; want tokyo and gone, scheduled", jobs)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	if n := jobs[0].Next.In(tokyo); n.Hour() != 2 || n.Minute() != 0 {
		t.Errorf("next tick of tokyo = %s; want 02:00 in Asia/Tokyo", n.In(tokyo))
	}

	bad := configYAML(dir, "alerts:\n  sinks:\n    - name: h\n      type: webhook\n      url: http://127.0.0.1:1/\n      secret_file: "+
		filepath.Join(dir, "missing")+"\n", jobSpec{name: "new", target: tg})
	cfg, err := config.Parse("bad.yaml", []byte(bad))
	if err == nil {
		err = d.Reload(cfg)
	}
	if err == nil {
		t.Errorf("Reload with an unreadable secret_file: err = nil; want an error")
	}
	if got := names(d.Jobs()); !slices.Equal(got, []string{"tokyo", "gone"}) {
		t.Errorf("jobs after a failed reload = %v; want [tokyo gone]", got)
	}

	good := configYAML(dir, "", jobSpec{name: "tokyo", schedule: "@every 1h", target: tg}, jobSpec{name: "new", target: tg})
	if err := d.Reload(parseConfig(t, good)); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	jobs = d.Jobs()
	if got := names(jobs); !slices.Equal(got, []string{"tokyo", "new"}) {
		t.Errorf("jobs after reload = %v; want [tokyo new]", got)
	}
	if next := jobs[0].Next; next == nil || time.Until(*next) > time.Hour+time.Minute || time.Until(*next) < 50*time.Minute {
		t.Errorf("next tick of the changed job = %v; want about an hour from now", next)
	}
	code, b := httpDo(t, "POST", d.url+"/api/v1/jobs/gone/runs", "", nil)
	if code != http.StatusNotFound {
		t.Errorf("start a removed job: status %d; want 404: %s", code, b)
	}
}

func names(jobs []JobInfo) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}

func TestStatusLine(t *testing.T) {
	d := &Daemon{cfg: &config.Config{}, active: map[string]*activeRun{}}
	if got := d.statusLine(); got != "idle; 0 jobs scheduled" {
		t.Errorf("idle status = %q", got)
	}
	ar := &activeRun{id: 7, job: "web", planDuration: 10 * time.Second}
	ar.res.add(model.Record{Elapsed: 2.5, Requests: 300})
	d.active["web"] = ar
	if got, want := d.statusLine(), "running web (run 7): 300 requests, 25%"; got != want {
		t.Errorf("status = %q; want %q", got, want)
	}
}

// TestRetentionAtStart: the daemon prunes the store to the retention
// limits when it starts.
func TestRetentionAtStart(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		id, err := st.CreateRun("web", store.TriggerAPI, "test", time.Now().Add(time.Duration(i-3)*time.Minute))
		if err == nil {
			err = st.FinishRun(id, store.StatusCompleted, nil, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	tg := target{addr: "127.0.0.1:1", pidFile: "/nonexistent.pid"}
	d := startDaemon(t, parseConfig(t, configYAML(dir, "retention:\n  max_runs_per_job: 1\n", jobSpec{name: "web", target: tg})), Options{})
	var runs []runInfo
	getJSON(t, d.url+"/api/v1/runs?job=web", &runs)
	if len(runs) != 1 || runs[0].ID != 3 {
		t.Errorf("runs after start with max_runs_per_job 1 = %+v; want only run 3", runs)
	}
}

// TestPSSGauges: the daemon exports the part of PSS its verdict judges
// (soakd_target_pss_anon_bytes) and, under the name it always had, the
// whole (soakd_target_pss_bytes), so that rules and dashboards written
// before the part was judged keep their series and its meaning. On a
// kernel without Pss_Anon both carry the whole.
func TestPSSGauges(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), "test")
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name string) float64 {
		for _, g := range m.resources {
			if g.name == name {
				return testutil.ToFloat64(g.WithLabelValues("web"))
			}
		}
		t.Fatalf("no gauge %s", name)
		return 0
	}
	var cpu cpuTracker
	r := model.Record{}
	r.Alive, r.SmapsValid, r.PSS, r.PSSAnon, r.PSSAnonValid = true, true, 10<<20, 4<<20, true
	m.observeRecord("web", r, &cpu)
	if w, p := gauge("soakd_target_pss_bytes"), gauge("soakd_target_pss_anon_bytes"); w != 10<<20 || p != 4<<20 {
		t.Errorf("got pss_bytes %g and pss_anon_bytes %g; want the whole 10 MiB and the part 4 MiB", w, p)
	}
	r.PSS, r.PSSAnon, r.PSSAnonValid = 12<<20, 0, false
	m.observeRecord("web", r, &cpu)
	if w, p := gauge("soakd_target_pss_bytes"), gauge("soakd_target_pss_anon_bytes"); w != 12<<20 || p != 12<<20 {
		t.Errorf("no Pss_Anon: got pss_bytes %g and pss_anon_bytes %g; want the whole, 12 MiB, in both", w, p)
	}
}
