package model

import (
	"fmt"
	"time"
)

// StoppedSpan is a stretch of the run in which the target, or some of its
// processes, was stopped (state T: SIGSTOP, SIGTSTP; or t: a tracer) and
// so answered nothing. From is the first sample that saw it stopped and
// To the first that saw it running again (or the last sample, when it
// was still stopped at the end): the stop began up to one sampling
// interval before From.
type StoppedSpan struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Seconds float64   `json:"seconds"`
	// Timeouts counts the requests that failed with cause timeout from
	// From until one request timeout after To (those sent before the stop
	// time out inside it; those queued during it time out after it). Only
	// a live run counts them: 0 in an analysis of stored samples.
	Timeouts uint64 `json:"timeouts"`
	// Root says the root process was stopped; Procs is the most processes
	// of the tree stopped at one sample.
	Root  bool `json:"root"`
	Procs int  `json:"procs"`
	// UntilEnd says the target was still stopped at the last sample.
	UntilEnd bool `json:"until_end,omitempty"`
}

// StoppedSpans finds the spans in which the target was stopped, from the
// records' stopped counts (Record.Stopped, Record.RootStopped). A record
// of a gone target ends a span.
func StoppedSpans(recs []Record) []StoppedSpan {
	var spans []StoppedSpan
	var cur *StoppedSpan
	for _, r := range recs {
		stopped := r.Alive && r.Stopped > 0
		switch {
		case stopped && cur == nil:
			spans = append(spans, StoppedSpan{From: r.Time})
			cur = &spans[len(spans)-1]
			fallthrough
		case stopped:
			cur.Root = cur.Root || r.RootStopped
			cur.Procs = max(cur.Procs, r.Stopped)
			cur.To = r.Time
		case cur != nil:
			cur.To = r.Time
			cur = nil
		}
	}
	if cur != nil {
		cur.UntilEnd = true
	}
	for i := range spans {
		spans[i].Seconds = spans[i].To.Sub(spans[i].From).Seconds()
	}
	return spans
}

// StoppedFindings are the sentences that say when the target was
// stopped, one per span, or none.
func (r *Report) StoppedFindings() []string {
	var out []string
	for _, s := range r.Target.Stopped {
		out = append(out, s.Finding())
	}
	return out
}

// Finding says when the target was stopped and what it cost, e.g. "the
// target was stopped (SIGSTOP) from 12:00:05 to 12:00:15 (10 s); 1382
// requests timed out meanwhile".
func (s StoppedSpan) Finding() string {
	who := "the target was stopped"
	if !s.Root {
		who = fmt.Sprintf("%d of the target's processes were stopped", s.Procs)
	}
	until := "to " + s.To.Format(time.TimeOnly)
	if s.UntilEnd {
		until = "until the end of the run, at least to " + s.To.Format(time.TimeOnly)
	}
	f := fmt.Sprintf("%s (SIGSTOP or a debugger) from %s %s (%s)", who, s.From.Format(time.TimeOnly), until, FormatDuration(s.Seconds))
	if s.Timeouts > 0 {
		f += fmt.Sprintf("; %d requests timed out meanwhile", s.Timeouts)
	}
	return f
}
