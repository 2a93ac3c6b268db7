package daemon

import (
	"fmt"
	"sort"
	"strings"
)

// sendStatus tells the service manager what runs: STATUS= with each
// running job and its progress.
func (d *Daemon) sendStatus() {
	_ = d.o.Notifier.Status(d.statusLine())
}

func (d *Daemon) statusLine() string {
	type running struct {
		ar *activeRun
		id int64
	}
	d.mu.Lock()
	runs := make([]running, 0, len(d.active))
	for _, ar := range d.active {
		runs = append(runs, running{ar, ar.id})
	}
	jobs := len(d.cfg.Jobs)
	d.mu.Unlock()
	if len(runs) == 0 {
		return fmt.Sprintf("idle; %d jobs scheduled", jobs)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ar.job < runs[j].ar.job })
	parts := make([]string, 0, len(runs))
	for _, r := range runs {
		ar := r.ar
		p, req := ar.progress()
		s := fmt.Sprintf("running %s (run %d): %d requests", ar.job, r.id, req)
		if p >= 0 {
			s += fmt.Sprintf(", %.0f%%", 100*p)
		}
		if rep := ar.latest(); rep != nil {
			s += ", so far " + rep.Verdict
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
