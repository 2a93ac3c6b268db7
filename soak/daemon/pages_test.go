package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/browsertest"
	"github.com/soakd/soakd/soak/analysis"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// storedRuns are the runs pagesState writes, by what they hold.
type storedRuns struct {
	failed, empty, leak, last, interrupted int64
}

// readRun reads a report and its samples kept in soak/web's testdata.
func readRun(t *testing.T, dir string) *model.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep model.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	f, err := os.Open(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rep.Records, err = model.ReadCSV(f); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return &rep
}

// pagesState writes a store with runs of every shape a page must show
// without NaN, Inf or "?": of job web, a failed run without a report, a
// run whose open loop made no request at all (zero figures, a 0 % rate),
// a leak and an inconclusive run (soak/web's testdata); of job crashed, a
// run left "running" with samples, as soakd leaves one when it is
// killed: the daemon finds it interrupted at its start.
func pagesState(t *testing.T, dir string) storedRuns {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids storedRuns
	add := func(job, status string, rep *model.Report, runErr error) int64 {
		t.Helper()
		started := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		if rep != nil && len(rep.Records) > 0 {
			started = rep.Records[0].Time
		}
		id, err := st.CreateRun(job, "schedule", "pid 1 (server)", started)
		if err != nil {
			t.Fatal(err)
		}
		if rep != nil {
			for _, r := range rep.Records {
				if err := st.AppendSample(id, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if status != store.StatusRunning {
			if err := st.FinishRun(id, status, rep, runErr); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	ids.failed = add("web", store.StatusFailed, nil, errors.New("target: pidfile /run/web.pid: no such file"))
	leak, last := readRun(t, "../web/testdata/run1"), readRun(t, "../web/testdata/run2")
	var idle []model.Record
	for _, r := range leak.Records[:40] {
		r.Requests, r.Errors, r.Rate, r.P50, r.P99 = 0, 0, 0, 0, 0
		idle = append(idle, r)
	}
	none := &load.Summary{Mode: "open", TargetRate: 200, DurationSeconds: 10, ErrorsByCause: map[string]uint64{}, StatusClasses: map[string]uint64{}}
	empty := analysis.NewReport(idle, none, model.TargetInfo{Probed: true, Description: "pid 1 (server)"}, analysis.Options{})
	ids.empty = add("web", store.StatusCompleted, empty, nil)
	ids.leak = add("web", store.StatusCompleted, leak, nil)
	ids.last = add("web", store.StatusCompleted, last, nil)
	crashed := &model.Report{Records: leak.Records[:60]}
	ids.interrupted = add("crashed", store.StatusRunning, crashed, nil)
	return ids
}

// pagesConfig has the jobs of pagesState against tg, web's load long
// enough to be going while the pages are checked, and ondemand with no
// schedule.
func pagesConfig(stateDir string, tg target) string {
	job := func(name, schedule string, d time.Duration) string {
		s := ""
		if schedule != "" {
			s = fmt.Sprintf("    schedule: %q\n", schedule)
		}
		return fmt.Sprintf(`  - name: %s
%s    max_duration: 2m
    target:
      pidfile: %s
    load:
      url: http://%s/
      rate: 50
      concurrency: 2
      duration: %s
      timeout: 5s
    sampling:
      interval: 250ms
      smaps_interval: 1s
    phases:
      warmup: "0"
`, name, s, tg.pidFile, tg.addr, d)
	}
	return fmt.Sprintf("listen: 127.0.0.1:0\nstate_dir: %s\njobs:\n", stateDir) +
		job("web", "@every 24h", time.Minute) + job("crashed", "@every 24h", 5*time.Second) + job("ondemand", "", 5*time.Second)
}

// untrue finds what no page may show: NaN, an infinity, a "?".
var untrue = regexp.MustCompile(`NaN|Infinity|\bInf\b|\?`)

// pageText is the text a reader sees on the page open now.
const pageText = `document.body.innerText`

// TestBrowserPagesTellTheTruth renders every page of a stored run set in
// Chromium (the index, each run, each comparison of two runs, and the
// live page of a run going) and looks for NaN, Inf and "?" in what they
// show. The interrupted run's page says it was interrupted; while a run of
// web goes, the jobs table shows web's last finished verdict; a job
// without a schedule runs from the index's Run now button.
func TestBrowserPagesTellTheTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser and a daemon")
	}
	ctx := browsertest.Start(t)
	tg := startTarget(t)
	state := filepath.Join(t.TempDir(), "state")
	ids := pagesState(t, state)
	d := startDaemon(t, parseConfig(t, pagesConfig(state, tg)), Options{LiveInterval: time.Second})
	if r := runStatus(t, d.url, "crashed", ids.interrupted); r.Status != store.StatusInterrupted {
		t.Fatalf("the run left running: status %q; want interrupted", r.Status)
	}
	lastVerdict := strings.ToUpper(runStatus(t, d.url, "web", ids.last).Verdict)

	check := func(url string) string {
		t.Helper()
		openPage(t, ctx, url)
		text := pollJS(t, ctx, url, pageText, func(s string) error {
			if s == "" {
				return errors.New("empty page")
			}
			return nil
		})
		if m := untrue.FindAllString(text, -1); len(m) > 0 {
			i := untrue.FindStringIndex(text)
			t.Errorf("%s shows %q: …%s…", url, m, text[max(0, i[0]-120):min(len(text), i[1]+60)])
		}
		return text
	}
	check(d.url + "/")
	reports := []int64{ids.empty, ids.leak, ids.last, ids.interrupted}
	for _, id := range reports {
		text := check(fmt.Sprintf("%s/runs/%d", d.url, id))
		if id == ids.interrupted && !strings.Contains(text, "This run was interrupted: soakd stopped during the run") {
			t.Errorf("the interrupted run's page does not say it was interrupted:\n%.600s", text)
		}
	}
	for _, a := range reports {
		for _, b := range reports {
			check(fmt.Sprintf("%s/compare?a=%d&b=%d", d.url, a, b))
		}
	}
	code, body := httpDo(t, "GET", fmt.Sprintf("%s/runs/%d", d.url, ids.failed), "", nil)
	if untrue.Match(body) || code == 200 {
		t.Errorf("the failed run without a report: %d %q; want an error that shows no NaN, Inf or ?", code, body)
	}

	live := startRun(t, d.url, "web", "")
	waitFor(t, 30*time.Second, "samples of the running run", func() bool { return sampleCount(t, d.url, live) >= 8 })
	openPage(t, ctx, d.url+"/")
	got := pollJS(t, ctx, "web's row while it runs", fmt.Sprintf(rowBadgesOf, "web"), func(s string) error {
		if s != lastVerdict+",RUNNING" {
			return fmt.Errorf("web's row badges = %q; want %s,RUNNING (the last finished run's verdict)", s, lastVerdict)
		}
		return nil
	})
	t.Logf("web's row while run %d goes: %s", live, got)
	check(fmt.Sprintf("%s/runs/%d", d.url, live))

	openPage(t, ctx, d.url+"/")
	if _, err := browsertest.Eval[bool](ctx, `document.querySelector('form.run[action="/api/v1/jobs/ondemand/runs"] button').click() || true`); err != nil {
		t.Fatal(err)
	}
	path := pollJS(t, ctx, "the page of the run the button started", `location.pathname`, func(s string) error {
		if !regexp.MustCompile(`^/runs/\d+$`).MatchString(s) {
			return fmt.Errorf("page %q; want /runs/ID", s)
		}
		return nil
	})
	var runs []runInfo
	getJSON(t, d.url+"/api/v1/runs?job=ondemand&limit=1", &runs)
	if len(runs) != 1 {
		t.Fatalf("ondemand's runs after Run now: %+v; want one", runs)
	}
	if r, want := runs[0], fmt.Sprintf("/runs/%d", runs[0].ID); path != want || r.Trigger != TriggerAPI {
		t.Errorf("after Run now: page %s, ondemand's newest run %+v; want %s, started through the API", path, r, want)
	}
}

// rowBadgesOf returns the badge words of a job's row in the jobs table.
const rowBadgesOf = `((job) => {
	const row = Array.from(document.querySelectorAll('#jobs-h ~ table tbody tr')).find(r => r.querySelector('th').textContent === job);
	return row ? Array.from(row.querySelectorAll('.badge')).map(b => b.lastChild.textContent.trim()).join(',') : 'missing';
})(%q)`
