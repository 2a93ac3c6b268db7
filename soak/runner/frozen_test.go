package runner

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
)

// A span's timeouts are counted from its first stopped sample until one
// request timeout after it ended; those after are not its.
func TestStopWatchCountsTheSpansTimeouts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	w := newStopWatch(zaptest.NewLogger(t), 2*time.Second)
	var recs []model.Record
	timeouts := []uint64{0, 5, 10, 30, 40, 45, 60, 70, 70}
	for i, n := range timeouts {
		r := model.Record{Sample: probes.Sample{Time: t0.Add(time.Duration(i) * time.Second), Alive: true}}
		if i == 1 || i == 2 || i == 3 { // stopped from 1 s to 4 s
			r.Stopped, r.RootStopped = 1, true
		}
		w.observe(r, n)
		recs = append(recs, r)
	}
	spans := model.StoppedSpans(recs)
	w.fill(spans, 100)
	// From 1 s (5 timeouts) to 4 s + 2 s = 6 s (60 timeouts).
	if len(spans) != 1 || spans[0].Timeouts != 55 {
		t.Errorf("spans %+v; want one with 55 timeouts", spans)
	}
	// A span still open at the end counts up to the load's end.
	w = newStopWatch(zaptest.NewLogger(t), 2*time.Second)
	r := model.Record{Sample: probes.Sample{Time: t0, Alive: true, Stopped: 1, RootStopped: true}}
	w.observe(r, 7)
	spans = model.StoppedSpans([]model.Record{r})
	w.fill(spans, 19)
	if len(spans) != 1 || spans[0].Timeouts != 12 || !spans[0].UntilEnd {
		t.Errorf("open span %+v; want 12 timeouts, until the end", spans)
	}
}
