package analysis

import (
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// NewReport judges the requests from the load's summary, with the
// causes' texts as examples, for a load-only run too; records alone (no
// summary) are judged from their counters, and a run without any
// request has no requests' verdict.
func TestNewReportJudgesTheRequests(t *testing.T) {
	var recs []model.Record
	for i := range 60 {
		recs = append(recs, model.Record{Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(100 * i), Errors: uint64(100 * i)})
	}
	sum := &load.Summary{Requests: 6000, Errors: 6000, ErrorsByCause: map[string]uint64{load.CauseStatus: 5000, load.CauseReset: 1000},
		ErrorTexts: map[string][]load.ErrorText{load.CauseStatus: {{Text: "HTTP/1.1 500 Internal Server Error", Count: 5000}}}}
	rep := NewReport(recs, sum, model.TargetInfo{}, Options{})
	h := rep.Requests
	if rep.Verdict != verdict.OverallFailing || h == nil || h.Errors != 6000 {
		t.Fatalf("verdict %s, requests %+v; want failing, 6000 errors", rep.Verdict, h)
	}
	if len(h.Causes) != 2 || h.Causes[0].Cause != load.CauseStatus || len(h.Causes[0].Examples) != 1 ||
		h.Causes[0].Examples[0].Text != "HTTP/1.1 500 Internal Server Error" {
		t.Errorf("causes %+v; want status_mismatch first with its status line, then reset", h.Causes)
	}
	if rep = NewReport(recs, nil, model.TargetInfo{}, Options{}); rep.Requests == nil || rep.Verdict != verdict.OverallFailing {
		t.Errorf("from the records alone: verdict %s, requests %+v; want failing", rep.Verdict, rep.Requests)
	}
	for i := range recs {
		recs[i].Requests, recs[i].Errors = 0, 0
	}
	if rep = NewReport(recs, nil, model.TargetInfo{}, Options{}); rep.Requests != nil || rep.Verdict != verdict.Inconclusive {
		t.Errorf("no requests: verdict %s, requests %+v; want inconclusive and none", rep.Verdict, rep.Requests)
	}
}

// When the target died, the attempts made while it was gone (refused, in
// the grace period) do not make the requests failing: only the samples
// until its death count.
func TestHealthStopsAtTheTargetsDeath(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var recs []model.Record
	for i := range 60 {
		r := model.Record{Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(100 * i)}
		r.Time = start.Add(time.Duration(i) * time.Second)
		if i > 40 { // gone: every attempt refused
			r.Errors = uint64(100 * (i - 40))
		}
		recs = append(recs, r)
	}
	died := start.Add(40 * time.Second)
	sum := &load.Summary{Requests: 5900, Errors: 1900, ErrorsByCause: map[string]uint64{load.CauseConnRefused: 1900}}
	rep := NewReport(recs, sum, model.TargetInfo{DiedAt: &died}, Options{})
	if h := rep.Requests; h == nil || h.Verdict != verdict.HealthOK || h.Requests != 4000 || h.Errors != 0 {
		t.Errorf("requests %+v; want ok: 0 of 4000 failed before the death", h)
	}
	if rep = NewReport(recs, sum, model.TargetInfo{}, Options{}); rep.Verdict != verdict.OverallFailing {
		t.Errorf("without a death the same run is %s; want failing", rep.Verdict)
	}
}
