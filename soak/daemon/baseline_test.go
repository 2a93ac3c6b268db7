package daemon

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/compare"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// TestBaselineRegression: a run pinned through the API is the job's
// baseline; a later run of a build that leaks 64 KiB a request is compared
// with it, reads regressed on rss (stored, on the run page, in the API),
// and fires SoakdRegression, which a later same comparison resolves. The
// compare page and API judge any two runs; a pin on the wrong job or of a
// missing run is refused.
func TestBaselineRegression(t *testing.T) {
	t.Parallel()
	hook := &hookReceiver{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	clean, leaky := startTarget(t), startTarget(t, "--leak-bytes", "65536")
	extra := "alerts:\n  sinks:\n    - name: hook\n      type: webhook\n      url: " + srv.URL + "\n"
	stateDir := t.TempDir()
	job := func(tg target) string {
		return configYAML(stateDir, extra, jobSpec{name: "web", target: tg, rate: 100, duration: 4 * time.Second, alerts: []string{"hook"}},
			jobSpec{name: "other", target: tg})
	}
	d := startDaemon(t, parseConfig(t, job(clean)), Options{LiveInterval: time.Second, Registry: prometheus.NewRegistry()})

	id1 := finishedRun(t, d, "web")
	pinURL := d.url + "/api/v1/jobs/web/baseline?run=" + strconv.FormatInt(id1, 10)
	if code, b := httpDo(t, "POST", strings.Replace(pinURL, "/web/", "/other/", 1), "", nil); code != http.StatusBadRequest {
		t.Errorf("pinning run %d on another job: status %d; want 400: %s", id1, code, b)
	}
	if code, b := httpDo(t, "POST", d.url+"/api/v1/jobs/web/baseline?run=999", "", nil); code != http.StatusNotFound {
		t.Errorf("pinning a missing run: status %d; want 404: %s", code, b)
	}
	if code, b := httpDo(t, "POST", pinURL, "", nil); code != http.StatusOK {
		t.Fatalf("POST %s: status %d; want 200: %s", pinURL, code, b)
	}

	if err := d.Reload(parseConfig(t, job(leaky))); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	id2 := finishedRun(t, d, "web")
	cmpURL := d.url + "/api/v1/runs/" + strconv.FormatInt(id2, 10) + "/comparison"
	// The run is stored as finished first, then compared with its baseline.
	waitFor(t, 30*time.Second, "run 2's comparison", func() bool {
		code, _ := httpDo(t, "GET", cmpURL, "", nil)
		return code == http.StatusOK
	})
	var cmp comparisonJSON
	getJSON(t, cmpURL, &cmp)
	rss := cmp.Metrics["rss_per_request"]
	t.Logf("run %d against %d: %s; rss %+v", id2, id1, cmp.Verdict, rss)
	if cmp.BaselineID != id1 || cmp.Verdict != compare.Regressed || rss.Verdict != compare.Regressed {
		t.Fatalf("comparison of run %d: baseline %d, verdict %s, rss %s; want baseline %d, regressed on rss", id2, cmp.BaselineID, cmp.Verdict, rss.Verdict, id1)
	}
	waitFor(t, 30*time.Second, "a firing SoakdRegression", func() bool {
		_, ok := hook.find(alerts.AlertRegression, alerts.StatusFiring)
		return ok
	})
	var base baselineJSON
	getJSON(t, d.url+"/api/v1/jobs/web/baseline", &base)
	if base.RunID != id1 || !base.Pinned {
		t.Errorf("baseline %+v; want run %d, pinned (a leaking run never replaces it)", base, id1)
	}
	checkPage(t, d.url+"/runs/"+strconv.FormatInt(id2, 10), "Against the baseline, run #"+strconv.FormatInt(id1, 10)+" (pinned)", "REGRESSED",
		`action="/api/v1/jobs/web/baseline"`, "Pin run #"+strconv.FormatInt(id2, 10))
	checkPage(t, d.url+"/compare?a="+strconv.FormatInt(id1, 10)+"&b="+strconv.FormatInt(id2, 10), `id="judged-h"`, "rss_per_request")
	var judged comparisonJSON
	getJSON(t, d.url+"/api/v1/compare?a="+strconv.FormatInt(id1, 10)+"&b="+strconv.FormatInt(id2, 10), &judged)
	if judged.Metrics["rss_per_request"].Verdict != compare.Regressed {
		t.Errorf("GET /api/v1/compare: rss %s; want regressed", judged.Metrics["rss_per_request"].Verdict)
	}

	// A later run that reads same resolves the alert; one that could not
	// decide keeps it, saying why.
	if !d.hub().regression("web", id2+1, id1, &compare.Result{Verdict: compare.Inconclusive}) {
		t.Errorf("an inconclusive comparison resolved the regression alert")
	}
	if d.hub().regression("web", id2+2, id1, &compare.Result{Verdict: compare.Same}) {
		t.Errorf("a same comparison kept the regression alert")
	}
	waitFor(t, 30*time.Second, "SoakdRegression resolved", func() bool {
		_, ok := hook.find(alerts.AlertRegression, alerts.StatusResolved)
		return ok
	})
}

// finishedRun starts a run of job and waits for it to end.
func finishedRun(t *testing.T, d *testDaemon, job string) int64 {
	t.Helper()
	id := startRun(t, d.url, job, "")
	waitFor(t, 90*time.Second, "run "+strconv.FormatInt(id, 10)+" to end", func() bool {
		return runStatus(t, d.url, job, id).Status != store.StatusRunning
	})
	return id
}

// TestSharedDaemon: a run that went while another did (of any job) shared
// the daemon's CPU, which its samples carry as soakd's own, so its CPU per
// request is not judged against soakd's; one that went alone did not.
func TestSharedDaemon(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	run := func(job string, from, to time.Duration) int64 {
		id, err := st.CreateRun(job, "schedule", "http://127.0.0.1:1/", t0.Add(from))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(id, store.StatusCompleted, &model.Report{Started: t0.Add(from), Ended: t0.Add(to)}, nil); err != nil {
			t.Fatal(err)
		}
		return id
	}
	alone := run("a", 0, time.Minute)
	first := run("a", 2*time.Minute, 4*time.Minute)
	overlapping := run("b", 3*time.Minute, 5*time.Minute)
	after := run("a", 6*time.Minute, 7*time.Minute)
	d := &Daemon{st: st}
	for _, c := range []struct {
		id     int64
		shared bool
	}{{alone, false}, {first, true}, {overlapping, true}, {after, false}, {999, true}} {
		if got := d.sharedDaemon(c.id); got != c.shared {
			t.Errorf("run %d: shared %v; want %v", c.id, got, c.shared)
		}
	}
}
