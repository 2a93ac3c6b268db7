package daemon

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/sweep"
)

// TestSweepJob runs a job of kind sweep: it keeps its report, page and
// table under state_dir/sweeps/JOB/RUN_ID beside an earlier sweep (a
// file written here), and its page is served.
func TestSweepJob(t *testing.T) {
	tg := startTarget(t)
	state := t.TempDir()
	yaml := configYAML(state, "") + fmt.Sprintf(`  - name: ladder
    schedule: "@every 1h"
    kind: sweep
    target: {pidfile: %s}
    load: {url: "http://%s/", timeout: 5s}
    sweep: {levels: [1, 2], level_duration: 300ms}
`, tg.pidFile, tg.addr)
	dir := filepath.Join(state, "sweeps", "ladder")
	earlier := &sweep.Report{URL: "http://" + tg.addr + "/", Knee: sweep.Knee{Cause: sweep.CauseNone}, Started: time.Unix(1, 0)}
	if err := earlier.WriteFiles(filepath.Join(dir, "0")); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, parseConfig(t, yaml), Options{})
	var ids []int64
	for range 1 {
		id, err := d.StartRun("ladder", TriggerAPI)
		if err != nil {
			t.Fatalf("StartRun: %v", err)
		}
		waitFor(t, 60*time.Second, "the sweep to end", func() bool {
			r, err := d.st.Run(id)
			return err == nil && r.Status != store.StatusRunning
		})
		if r, _ := d.st.Run(id); r.Status != store.StatusCompleted {
			t.Fatalf("sweep %d: status %s (%s); want completed", id, r.Status, r.Error)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		for _, f := range []string{"report.json", "report.txt", "report.html"} {
			if _, err := os.Stat(filepath.Join(dir, strconv.FormatInt(id, 10), f)); err != nil {
				t.Errorf("sweep %d: %v", id, err)
			}
		}
	}
	rep, err := sweep.ReadReport(filepath.Join(dir, strconv.FormatInt(ids[0], 10), "report.json"))
	if err != nil || len(rep.Levels) == 0 || rep.Knee.Cause == "" {
		t.Fatalf("the sweep's report = %+v, %v; want its levels and knee", rep, err)
	}
	if last := lastSweep(dir); last == nil || !last.Started.Equal(rep.Started) {
		t.Errorf("lastSweep = %v; want the newest, run %d", last, ids[0])
	}
	code, body := httpDo(t, "GET", fmt.Sprintf("%s/sweeps/%d", d.url, ids[0]), "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `id="sweep-throughput"`) {
		t.Errorf("GET /sweeps/%d = %d; want the sweep's page with its charts", ids[0], code)
	}
	// the run list links every run to /runs/ID; a sweep's leads to its page
	code, body = httpDo(t, "GET", fmt.Sprintf("%s/runs/%d", d.url, ids[0]), "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `id="sweep-throughput"`) {
		t.Errorf("GET /runs/%d = %d; want a redirect to the sweep's page", ids[0], code)
	}
}
