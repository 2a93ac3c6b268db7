package daemon

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// TestScheduledRun lets an @every 1s schedule start a short run against a
// spawned target, then reads the run, its samples and its report back
// through the API. The ticks that come while it runs are skipped and
// counted.
func TestScheduledRun(t *testing.T) {
	tg := startTarget(t, "--leak-bytes", "1024")
	yaml := configYAML(t.TempDir(), "", jobSpec{name: "web", schedule: "@every 1s", target: tg, duration: 3 * time.Second})
	reg := prometheus.NewRegistry()
	d := startDaemon(t, parseConfig(t, yaml), Options{Registry: reg})

	var run runInfo
	waitFor(t, 90*time.Second, "a scheduled run to complete", func() bool {
		var runs []runInfo
		getJSON(t, d.url+"/api/v1/runs?job=web", &runs)
		for _, r := range runs {
			if r.Status == store.StatusCompleted {
				run = r
				return true
			}
		}
		return false
	})
	if run.Trigger != store.TriggerSchedule {
		t.Errorf("trigger = %q; want %q", run.Trigger, store.TriggerSchedule)
	}
	id := strconv.FormatInt(run.ID, 10)
	var rep model.Report
	getJSON(t, d.url+"/api/v1/runs/"+id, &rep)
	if rep.Load == nil || rep.Load.Requests == 0 {
		t.Errorf("report load = %+v; want requests > 0", rep.Load)
	}
	if _, ok := rep.Resources["rss"]; !ok || !rep.Target.Probed {
		t.Errorf("report resources = %v, probed %v; want rss analysed", rep.ResourceNames(), rep.Target.Probed)
	}
	if n := sampleCount(t, d.url, run.ID); n < 5 || n != rep.Samples {
		t.Errorf("samples = %d, report says %d; want the same, >= 5", n, rep.Samples)
	}
	checkMembers(t, d.url+"/api/v1/runs/"+id+"/samples")
	checkCSV(t, d.url+"/api/v1/runs/"+id+"/samples?format=csv", nil)
	checkCSV(t, d.url+"/api/v1/runs/"+id+"/samples", map[string]string{"Accept": "text/csv"})

	if got := testutil.ToFloat64(d.m.runs.WithLabelValues("web", resultOK)); got < 1 {
		t.Errorf("soakd_runs_total{result=ok} = %g; want >= 1", got)
	}
	waitFor(t, 30*time.Second, "a skipped tick", func() bool {
		return testutil.ToFloat64(d.m.skipped.WithLabelValues("web")) >= 1
	})
}

// checkMembers checks that the stored samples list the target's process
// by its identity.
func checkMembers(t *testing.T, url string) {
	t.Helper()
	var recs []model.Record
	getJSON(t, url, &recs)
	for i, r := range recs {
		if !r.Alive {
			continue
		}
		if len(r.Members) == 0 || r.Members[0].PID != r.RootPID || r.Members[0].Start != r.RootStart || r.Members[0].RSS != r.RSS {
			t.Errorf("sample %d: members %+v; want the root, pid %d start %d with the sample's RSS %d", i, r.Members, r.RootPID, r.RootStart, r.RSS)
		}
		return
	}
	t.Errorf("no live sample in %d", len(recs))
}

func checkCSV(t *testing.T, url string, hdr map[string]string) {
	t.Helper()
	code, b := httpDo(t, "GET", url, "", hdr)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", url, code, b)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("GET %s: %d rows, %v; want a header and samples", url, len(rows), err)
	}
	if got, want := strings.Join(rows[0], ","), strings.Join(model.CSVHeader, ","); got != want {
		t.Errorf("CSV header = %s; want %s", got, want)
	}
	if _, err := model.ReadCSV(bytes.NewReader(b)); err != nil {
		t.Errorf("model.ReadCSV: %v", err)
	}
}

// TestAPI checks the API's answers and its token: mutating calls need the
// bearer token, reads do not, and errors are JSON.
func TestAPI(t *testing.T) {
	tg := startTarget(t)
	const token = "s3cret-token"
	yaml := configYAML(t.TempDir(), "token: "+token+"\n", jobSpec{name: "web", target: tg, duration: time.Minute})
	d := startDaemon(t, parseConfig(t, yaml), Options{})
	post := func(path, tok string) (int, []byte) { return httpDo(t, "POST", d.url+path, tok, nil) }

	for _, tc := range []struct {
		name, method, path, token string
		want                      int
	}{
		{"start without token", "POST", "/api/v1/jobs/web/runs", "", http.StatusUnauthorized},
		{"start with a wrong token", "POST", "/api/v1/jobs/web/runs", "nope", http.StatusUnauthorized},
		{"stop without token", "POST", "/api/v1/runs/1/stop", "", http.StatusUnauthorized},
		{"unknown job", "POST", "/api/v1/jobs/nope/runs", token, http.StatusNotFound},
		{"unknown run", "GET", "/api/v1/runs/999", "", http.StatusNotFound},
		{"bad run ID", "GET", "/api/v1/runs/x", "", http.StatusBadRequest},
		{"bad limit", "GET", "/api/v1/runs?limit=-1", "", http.StatusBadRequest},
		{"unknown samples", "GET", "/api/v1/runs/999/samples", "", http.StatusNotFound},
		{"stop unknown run", "POST", "/api/v1/runs/999/stop", token, http.StatusNotFound},
		{"unknown endpoint", "GET", "/api/v1/nope", "", http.StatusNotFound},
		{"unknown method on an existing path", "DELETE", "/api/v1/jobs", "", http.StatusMethodNotAllowed},
		{"GET on a POST-only path", "GET", "/api/v1/runs/1/stop", "", http.StatusMethodNotAllowed},
		{"jobs", "GET", "/api/v1/jobs", "", http.StatusOK},
		{"healthz", "GET", "/healthz", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := httpDo(t, tc.method, d.url+tc.path, tc.token, nil)
			if code != tc.want {
				t.Fatalf("%s %s: status %d; want %d: %s", tc.method, tc.path, code, tc.want, b)
			}
			var body map[string]any
			if err := json.Unmarshal(b, &body); err != nil && tc.path != "/api/v1/jobs" {
				t.Fatalf("body is not JSON: %v: %s", err, b)
			}
			if tc.want >= 400 && body["error"] == "" {
				t.Errorf("body = %s; want {\"error\": ...}", b)
			}
		})
	}

	id := startRun(t, d.url, "web", token)
	if code, b := post("/api/v1/jobs/web/runs", token); code != http.StatusConflict {
		t.Errorf("second start: status %d; want 409: %s", code, b)
	}
	var jobs []JobInfo
	getJSON(t, d.url+"/api/v1/jobs", &jobs)
	if len(jobs) != 1 || !jobs[0].Running || jobs[0].RunID != id || jobs[0].Next == nil {
		t.Errorf("jobs = %+v; want web running run %d with a next tick", jobs, id)
	}
	waitFor(t, 30*time.Second, "samples of the running run", func() bool { return sampleCount(t, d.url, id) >= 3 })
	code, b := httpDo(t, "GET", d.url+"/api/v1/runs/"+strconv.FormatInt(id, 10), "", nil)
	if code != http.StatusOK || !bytes.Contains(b, []byte(`"verdict"`)) {
		t.Errorf("live report: status %d; want 200 with a verdict: %s", code, b)
	}
	checkPage(t, d.url+"/runs/"+strconv.FormatInt(id, 10), `http-equiv="refresh"`, "<svg")
	if code, b := post("/api/v1/runs/"+strconv.FormatInt(id, 10)+"/stop", token); code != http.StatusAccepted {
		t.Fatalf("stop: status %d; want 202: %s", code, b)
	}
	waitFor(t, 30*time.Second, "the run to stop", func() bool {
		return runStatus(t, d.url, "web", id).Status == store.StatusStopped
	})
	getJSON(t, d.url+"/api/v1/runs/"+strconv.FormatInt(id, 10), &model.Report{})
	if code, b := post("/api/v1/runs/"+strconv.FormatInt(id, 10)+"/stop", token); code != http.StatusConflict {
		t.Errorf("stop a stopped run: status %d; want 409: %s", code, b)
	}
	page := checkPage(t, d.url+"/runs/"+strconv.FormatInt(id, 10), "<svg")
	if strings.Contains(page, `http-equiv="refresh"`) {
		t.Errorf("the page of a finished run refreshes itself")
	}
	checkPage(t, d.url+"/", "web", "/runs/"+strconv.FormatInt(id, 10))
	checkPage(t, d.url+"/compare?a=1&b=1", "<svg")
	for _, path := range []string{"/runs/999", "/compare?a=1&b=999", "/compare?a=x"} {
		if code, _ := httpDo(t, "GET", d.url+path, "", nil); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("GET %s: status %d; want 404 or 400", path, code)
		}
	}
}

// checkPage GETs an HTML page and checks that it holds every string of want.
func checkPage(t *testing.T, url string, want ...string) string {
	t.Helper()
	code, b := httpDo(t, "GET", url, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d; want 200: %.300s", url, code, b)
	}
	for _, w := range want {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("GET %s: page lacks %q", url, w)
		}
	}
	return string(b)
}

// TestRefusesOpenListenerWithoutToken: a listener off loopback needs a
// token, both in the daemon and in a real `soakd serve`.
func TestRefusesOpenListenerWithoutToken(t *testing.T) {
	dir := t.TempDir()
	cfg := parseConfig(t, configYAML(dir, ""))
	cfg.Listen = "0.0.0.0:0"
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "not on loopback") {
		t.Errorf("New with listen 0.0.0.0:0 and no token: err = %v; want a refusal", err)
	}

	path := filepath.Join(dir, "soakd.yaml")
	writeConfig(t, path, configYAML(dir, ""))
	cmd := exec.Command(soaktest.Binary(t, soaktest.Soakd), "serve", "--config", path, "--listen", "0.0.0.0:0")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 {
		t.Errorf("soakd serve --listen 0.0.0.0:0: exit code %d, err %v; want 2:\n%s", code, err, out)
	}
	if !strings.Contains(string(out), "loopback") {
		t.Errorf("output does not say why:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); err == nil {
		t.Errorf("the store was created although soakd refused to start")
	}
}

// TestMaxDuration: max_duration cuts a run that overruns; it ends
// "stopped", says why, and keeps its analysis.
func TestMaxDuration(t *testing.T) {
	tg := startTarget(t)
	cfg := parseConfig(t, configYAML(t.TempDir(), "", jobSpec{name: "web", target: tg, duration: time.Minute}))
	cfg.Jobs[0].MaxDuration = 2 * time.Second
	d := startDaemon(t, cfg, Options{})
	id := startRun(t, d.url, "web", "")
	var r runInfo
	waitFor(t, 60*time.Second, "max_duration to stop the run", func() bool {
		r = runStatus(t, d.url, "web", id)
		return r.Status != store.StatusRunning
	})
	if r.Status != store.StatusStopped || !strings.Contains(r.Error, "max_duration") || r.Verdict == "" {
		t.Errorf("run = %+v; want stopped, the error naming max_duration, and a verdict", r)
	}
}
