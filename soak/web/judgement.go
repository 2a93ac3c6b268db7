package web

import (
	"github.com/soakd/soakd/soak/compare"
)

// Judgement is a comparison of a new run with an old one, as the run page
// (against the job's baseline) and the compare page show it.
type Judgement struct {
	OldID, NewID int64
	// Baseline is true when the old run is the new run's baseline; Pinned
	// when that baseline was pinned.
	Baseline, Pinned bool
	Result           compare.Result
}

// JudgeRow is one metric of a judgement, formatted.
type JudgeRow struct {
	Name, Verdict, Reason string
	compare.Cells
}

// Rows are the judgement's metrics in display order.
func (j Judgement) Rows() []JudgeRow {
	var out []JudgeRow
	for _, n := range j.Result.Names() {
		m := j.Result.Metrics[n]
		out = append(out, JudgeRow{Name: n, Verdict: m.Verdict, Reason: m.Reason, Cells: m.Cells()})
	}
	return out
}

// PinButton is the run page's button that pins the run as its job's
// baseline (POST /api/v1/jobs/{job}/baseline).
type PinButton struct {
	Job   string
	RunID int64
	// IsBaseline is true when the run is the job's baseline already;
	// Pinned when it is pinned.
	IsBaseline, Pinned bool
}
