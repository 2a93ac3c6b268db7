package daemon

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

// TestUntilDecidedJob: a job with until_decided runs until decided, at
// most its load's bound; a run that reaches it undecided (4 s: no look is
// due before 30 s of soak, none decides before 5 minutes) is completed,
// stopped by its duration, and its report names what each undecided part
// was missing. The runner's end-to-end tests stop by "decided".
func TestUntilDecidedJob(t *testing.T) {
	t.Parallel()
	tg := startTarget(t)
	y := configYAML(t.TempDir(), "", jobSpec{name: "web", target: tg, duration: 4 * time.Second})
	y = strings.Replace(y, "    max_duration: 5m\n", "    max_duration: 5m\n    until_decided: true\n", 1)
	cfg := parseConfig(t, y)
	if !cfg.Jobs[0].UntilDecided {
		t.Fatal("the job's until_decided did not parse")
	}
	d := startDaemon(t, cfg, Options{})
	id := startRun(t, d.url, "web", "")
	var r runInfo
	waitFor(t, 2*time.Minute, "the run to end", func() bool {
		r = runStatus(t, d.url, "web", id)
		return r.Status != store.StatusRunning
	})
	if r.Status != store.StatusCompleted {
		t.Fatalf("run = %+v; want completed", r)
	}
	var rep model.Report
	getJSON(t, d.url+"/api/v1/runs/"+strconv.FormatInt(id, 10), &rep)
	if rep.Until == nil || rep.Load == nil {
		t.Fatalf("report has until_decided %v, load %v; want both", rep.Until, rep.Load)
	}
	if rep.Load.StoppedBy != "duration" || rep.Until.Decided || len(rep.Until.Missing) == 0 {
		t.Errorf("stopped by %q, decided %v, missing %v; want duration, undecided, the parts missing",
			rep.Load.StoppedBy, rep.Until.Decided, rep.Until.Missing)
	}
	if rep.Load.StoppedBy == load.StopDecided {
		t.Errorf("a 4 s run stopped by decided")
	}
}
