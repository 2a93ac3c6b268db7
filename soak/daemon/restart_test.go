package daemon

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/store"
)

// restartRuns is how many completed runs of each soakd
// TestRestartChangesNothing makes: the leak is decided within the first
// three (see TestLeakAcrossRuns) and the killed soakd restarts twice on
// its way.
const restartRuns = 5

// soakdUnderTest is one real soakd soaking its own long-lived leaking
// process, 10 s at 100 requests/s a run, its alerts sent to a webhook
// receiver. The test starts each run through the API, so that it knows
// when soakd is between two runs.
type soakdUnderTest struct {
	name    string
	cfgPath string
	hook    *hookReceiver
	p       *soakdProc
}

func newSoakdUnderTest(t *testing.T, name string) *soakdUnderTest {
	t.Helper()
	s := &soakdUnderTest{name: name, hook: &hookReceiver{}}
	srv := httptest.NewServer(s.hook)
	t.Cleanup(srv.Close)
	tg := startTarget(t, "--leak-bytes", "16384")
	serve(t, tg.addr, 500) // long-lived: it served before soakd first sees it
	dir := t.TempDir()
	s.cfgPath = filepath.Join(dir, "soakd.yaml")
	extra := fmt.Sprintf("alerts:\n  retry: {initial: 100ms, max: 1s}\n  sinks:\n    - name: hook\n      type: webhook\n      url: %s\n", srv.URL)
	writeConfig(t, s.cfgPath, configYAML(filepath.Join(dir, "state"), extra,
		jobSpec{name: "web", target: tg, rate: 100, duration: 10 * time.Second, alerts: []string{"hook"}}))
	s.p = startSoakd(t, s.cfgPath)
	return s
}

// completed returns the runs that completed, oldest first.
func (s *soakdUnderTest) completed(t *testing.T) []runInfo {
	t.Helper()
	var out []runInfo
	for _, r := range endedRuns(t, s.p.url, "web") {
		if r.Status == store.StatusCompleted {
			out = append(out, r)
		}
	}
	return out
}

// start starts a run and returns its ID.
func (s *soakdUnderTest) start(t *testing.T) int64 {
	t.Helper()
	return startRun(t, s.p.url, "web", "")
}

// waitEnded waits for run id to end.
func (s *soakdUnderTest) waitEnded(t *testing.T, id int64) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("%s: run %d to end", s.name, id), func() bool {
		return runStatus(t, s.p.url, "web", id).Status != store.StatusRunning
	})
}

// kill SIGKILLs soakd, reaps it and starts it again on the same store.
func (s *soakdUnderTest) kill(t *testing.T) {
	t.Helper()
	if err := s.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.p.wait(t, 30*time.Second)
	s.p = startSoakd(t, s.cfgPath)
}

// pages returns, per alert (alertname/job/resource), how many firing and
// resolved notifications the receiver got: "SoakdLeak/web/rss: 1 firing,
// 0 resolved".
func (s *soakdUnderTest) pages() []string {
	s.hook.mu.Lock()
	defer s.hook.mu.Unlock()
	type count struct{ firing, resolved int }
	by := map[string]*count{}
	for _, a := range s.hook.alerts {
		fp := a.Labels[alerts.LabelAlertname] + "/" + a.Labels[alerts.LabelJob] + "/" + a.Labels[alerts.LabelResource]
		if by[fp] == nil {
			by[fp] = &count{}
		}
		if a.Status == alerts.StatusFiring {
			by[fp].firing++
		} else {
			by[fp].resolved++
		}
	}
	var out []string
	for fp, c := range by {
		out = append(out, fmt.Sprintf("%s: %d firing, %d resolved", fp, c.firing, c.resolved))
	}
	sort.Strings(out)
	return out
}

// findingSeries are the /metrics series that state a finding and must
// not change across a restart: soakd's own alerts, and the last run's
// verdict and leak gauges.
var findingSeries = []string{"soakd_alert_firing", "soakd_last_run_verdict", "soakd_leak_detected"}

// series scrapes base/metrics and returns the series of names, as
// `name{label="value",...} value`, sorted.
func series(t *testing.T, base string, names ...string) []string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	var out []string
	for _, n := range names {
		mf, ok := mfs[n]
		if !ok {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", n, strings.Join(ls, ","), m.GetGauge().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// leakLabels returns the resource labels SoakdLeak had in the received
// notifications, in order, repeats removed.
func (s *soakdUnderTest) leakLabels() []string {
	s.hook.mu.Lock()
	defer s.hook.mu.Unlock()
	var out []string
	for _, a := range s.hook.alerts {
		if a.Labels[alerts.LabelAlertname] == alerts.AlertLeak {
			out = append(out, a.Labels[alerts.LabelResource])
		}
	}
	return slices.Compact(out)
}

// TestRestartChangesNothing is issue 43's item 1: two real soakd serve
// processes each soak a long-lived leaking process, run after run, their
// alerts sent to a webhook receiver. One runs uninterrupted; the
// other is killed with SIGKILL between two runs and again in the middle
// of a run, and restarted on the same store each time. Every completed
// run after the leak was decided reads leak on both, judged against the
// process's level when soakd first saw it (first_seen_level); a restart
// changes
// none of the finding's /metrics series (soakd_alert_firing, the last
// run's verdict and leak gauges) and sends no notification; and both
// receivers got the same pages: the leak once, firing, never resolved,
// under one resource label.
func TestRestartChangesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("soaks two processes for about 2 minutes")
	}
	steady := newSoakdUnderTest(t, "uninterrupted")
	killed := newSoakdUnderTest(t, "killed")
	both := func() {
		a, b := steady.start(t), killed.start(t)
		steady.waitEnded(t, a)
		killed.waitEnded(t, b)
	}
	for range 3 {
		both()
	}
	waitFor(t, 30*time.Second, "the leak paged", func() bool { return len(killed.pages()) > 0 })
	before, pages := series(t, killed.p.url, findingSeries...), killed.pages()
	killed.kill(t)
	if after := series(t, killed.p.url, findingSeries...); !slices.Equal(after, before) {
		t.Errorf("a kill between runs changed the finding's series:\nbefore %q\nafter  %q", before, after)
	}

	a, cut := steady.start(t), killed.start(t)
	waitFor(t, 30*time.Second, "the killed soakd's run 3 samples in", func() bool { return sampleCount(t, killed.p.url, cut) >= 3 })
	firing := series(t, killed.p.url, "soakd_alert_firing")
	killed.kill(t)
	if after := series(t, killed.p.url, "soakd_alert_firing"); !slices.Equal(after, firing) {
		t.Errorf("a kill in the middle of run %d changed soakd_alert_firing:\nbefore %q\nafter  %q", cut, firing, after)
	}
	if got := runStatus(t, killed.p.url, "web", cut); got.Status != store.StatusInterrupted {
		t.Errorf("run %d cut short by the kill: %s; want %s", cut, got.Status, store.StatusInterrupted)
	}
	if got := killed.pages(); !slices.Equal(got, pages) {
		t.Errorf("the restarts sent notifications: %q; before them %q", got, pages)
	}
	steady.waitEnded(t, a)
	for _, s := range []*soakdUnderTest{steady, killed} {
		for len(s.completed(t)) < restartRuns {
			s.waitEnded(t, s.start(t))
		}
	}
	for _, s := range []*soakdUnderTest{steady, killed} {
		runs := s.completed(t)
		checkLeakyRuns(t, s.p.url, runs)
		// Every run after the first judges growth against the level of the
		// process when soakd first saw it (the first run's baseline): a
		// soakd that forgot the evidence would take a later run's.
		first := rssOf(t, s.p.url, runs[1].ID).FirstSeenLevel
		for _, r := range runs[1:] {
			if got := rssOf(t, s.p.url, r.ID).FirstSeenLevel; got != first || got <= 0 {
				t.Errorf("%s: run %d's first-seen level %g; want run 2's, %g, from the first run", s.name, r.ID, got, first)
			}
		}
		if labels := s.leakLabels(); len(labels) != 1 {
			t.Errorf("%s: SoakdLeak's resource label went %q; want one, fixed at first fire", s.name, labels)
		}
	}
	// The two processes are two: their leak may be led by rss in one and
	// pss in the other. Compare with the label made the same.
	same := func(s *soakdUnderTest, in []string) []string {
		labels := s.leakLabels()
		out := make([]string, len(in))
		for i, x := range in {
			if len(labels) == 1 {
				x = strings.ReplaceAll(x, "SoakdLeak/web/"+labels[0], "SoakdLeak/web/LEAD")
				x = strings.ReplaceAll(x, `alertname="SoakdLeak",job="web",resource="`+labels[0]+`"`, `alertname="SoakdLeak",job="web",resource="LEAD"`)
			}
			out[i] = x
		}
		return out
	}
	if a, b := same(steady, steady.pages()), same(killed, killed.pages()); !slices.Equal(a, b) {
		t.Errorf("pages: uninterrupted %q; killed twice %q; want the same", a, b)
	}
	want := []string{"SoakdLeak/web/LEAD: 1 firing, 0 resolved"}
	if got := same(killed, killed.pages()); !slices.Equal(got, want) {
		t.Errorf("pages of the killed soakd: %q; want %q", got, want)
	}
	final := []string{"soakd_alert_firing", "soakd_last_run_verdict"}
	if a, b := same(steady, series(t, steady.p.url, final...)), same(killed, series(t, killed.p.url, final...)); !slices.Equal(a, b) {
		t.Errorf("after %d runs, /metrics: uninterrupted %q; killed twice %q; want the same", restartRuns, a, b)
	}
}
