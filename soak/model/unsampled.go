package model

import (
	"fmt"
	"io"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/verdict"
)

// UnsampledAdvice is what to do about an endpoint whose server is not
// sampled.
const UnsampledAdvice = "sample it with its own run, or use --pid/--match to choose the tree"

// writeUnsampled warns of each endpoint whose server is not sampled.
func (t TargetInfo) writeUnsampled(w io.Writer) {
	for _, u := range t.Unsampled {
		fmt.Fprintf(w, "  WARNING: endpoint %s is not sampled: its requests are in the load, its server's resources in no verdict; %s\n", u, UnsampledAdvice)
	}
}

// Upstream is a local server the sampled tree connects to and that is not
// in it (probes.Upstream: a reverse proxy's backend), with what the run
// did about it.
type Upstream struct {
	probes.Upstream
	// SeenSeconds is when it was first seen, on the records' scale, and
	// SeenPhase the phase it was seen in.
	SeenSeconds float64 `json:"seen_seconds"`
	SeenPhase   string  `json:"seen_phase"`
	// Followed says its server (and its descendants) was sampled with the
	// tree from SeenSeconds on (--follow-upstreams): its resources are in
	// the verdict.
	Followed bool `json:"followed"`
	// Note says why it was not followed although asked to, or what
	// following it changed in the analysis.
	Note string `json:"note,omitempty"`
}

// Advice says what to do about an upstream that is not sampled.
func (u Upstream) Advice() string {
	if u.PID == 0 {
		return "soak it directly"
	}
	return fmt.Sprintf("add --pid %d or soak it directly, or sample it with the tree with --follow-upstreams", u.PID)
}

// Sentence is the report's line for u, without its indent.
func (u Upstream) Sentence() string {
	if u.Followed {
		s := fmt.Sprintf("upstream: %s, followed from %.1f s (%s): its resources are in the verdict", u, u.SeenSeconds, u.SeenPhase)
		if u.Note != "" {
			s += "; " + u.Note
		}
		return s
	}
	s := fmt.Sprintf("WARNING: %s, which is not sampled: %s", u, u.Advice())
	if u.Note != "" {
		s += " (" + u.Note + ")"
	}
	return s
}

// writeUpstreams names each upstream of the tree and whether it was
// sampled.
func (t TargetInfo) writeUpstreams(w io.Writer) {
	for _, u := range t.Upstreams {
		fmt.Fprintf(w, "  %s\n", u.Sentence())
	}
}

// BaselineLeftOut says whether an upstream joined the sampled set after
// baseline samples were taken: the baseline then measured a smaller
// tree than the soak, and its records are left out of the analysis (the
// live run's rule, which soakd analyze applies again from the report's
// upstreams).
func BaselineLeftOut(ups []Upstream, recs []Record) bool {
	for _, u := range ups {
		if !u.Followed {
			continue
		}
		for _, r := range recs {
			if r.Phase == verdict.Baseline && r.Elapsed <= u.SeenSeconds {
				return true
			}
		}
	}
	return false
}

// WithoutBaseline returns recs without the baseline's records.
func WithoutBaseline(recs []Record) []Record {
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if r.Phase != verdict.Baseline {
			out = append(out, r)
		}
	}
	return out
}
