package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestAnalyzeNamesTheStopInASamplesFile: samples.csv keeps the stopped
// state of each sample, so `soakd analyze` names the span in which the
// target was stopped, as the run did.
func TestAnalyzeNamesTheStopInASamplesFile(t *testing.T) {
	_, out, stderr := analyzeArgs(t, stoppedSamples(t, false))
	want := "TARGET STOPPED: the target was stopped (SIGSTOP or a debugger) from 12:00:20 to 12:00:30 (10 s)."
	if !strings.HasPrefix(out, want) {
		t.Errorf("analyze's report does not start with %q:\n%s%s", want, out, stderr)
	}
}

// TestAnalyzeCountsAFreezeAsAnOutage: the same file with no request
// completed while the target was stopped: it answered nothing for 9 s of
// the 59 s load (the samples that saw it stopped span 9 s), more than the
// 1 % allowed, so the requests are failing, exit 5, though none failed.
func TestAnalyzeCountsAFreezeAsAnOutage(t *testing.T) {
	code, out, stderr := analyzeArgs(t, stoppedSamples(t, true))
	if want := "unavailable for 9 s of the 59 s load (15.3 %, more than the 0.6 s allowed): stopped from 20 s to 29 s"; code != exitFailing || !strings.Contains(out, want) {
		t.Errorf("exit %d; want %d and a report containing %q\n%s%s", code, exitFailing, want, out, stderr)
	}
}

// stoppedSamples writes a samples.csv of 60 s at 100 requests a second in
// which the target is stopped from the 20th second to the 30th; frozen:
// no request completes meanwhile.
func stoppedSamples(t *testing.T, frozen bool) string {
	t.Helper()
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []model.Record
	for i := range 60 {
		r := model.Record{
			Sample: probes.Sample{Time: start.Add(time.Duration(i) * time.Second), Alive: true, Incarnation: 1, RootPID: 42,
				Procs: 1, RSSValid: true, RSS: 50 << 20, FDsValid: true, FDs: 12, ThreadsValid: true, Threads: 4},
			Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(i) * 100,
		}
		if i >= 20 && i < 30 {
			r.Stopped, r.RootStopped = 1, true
			if frozen {
				r.Requests = 2000
			}
		}
		if frozen && i >= 30 {
			r.Requests -= 1000
		}
		recs = append(recs, r)
	}
	path := filepath.Join(t.TempDir(), "samples.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.WriteCSV(f, recs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}
