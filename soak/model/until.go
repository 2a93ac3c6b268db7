package model

import (
	"fmt"
	"io"
)

// Until is how an until-decided run (soakd run --until-decided) looked
// at its soak: the run stops at the first look that, with the ones
// before it, decides every part (verdict.ConfirmLooks), or at its most.
type Until struct {
	// Decided says every part was decided: the run stopped by
	// "decided", or its last look at the most decided them.
	Decided bool `json:"decided"`
	// Looks is the looks taken of PlannedLooks (verdict.NewSchedule).
	Looks        int `json:"looks"`
	PlannedLooks int `json:"planned_looks"`
	// SoakSeconds is the soak at the look the report is the analysis
	// of: the deciding one, or the last.
	SoakSeconds float64 `json:"soak_seconds"`
	// Share is that look's share of the run's error budget; the report's
	// resources are analysed at Alpha × Share and their intervals at
	// Level (see verdict.Thresholds.Spent).
	Share float64 `json:"share"`
	Level float64 `json:"level"`
	// Missing names each part a run that reached its most left
	// undecided, and what it needs, e.g. "fds: run ≥ 200 000 more
	// requests".
	Missing []string `json:"missing,omitempty"`
}

// writeUntil writes what an until-decided run left undecided.
func (r *Report) writeUntil(w io.Writer) {
	u := r.Until
	if u == nil || u.Decided {
		return
	}
	fmt.Fprintf(w, "  undecided at the most (%d of %d looks, %s of soak); missing:\n", u.Looks, u.PlannedLooks, FormatDuration(u.SoakSeconds))
	for _, m := range u.Missing {
		fmt.Fprintf(w, "    %s\n", m)
	}
}
