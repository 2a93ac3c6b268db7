package store

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestAlertStateSurvivesReopen: saved alert states come back after the
// store is closed and opened again, a save replaces, a delete forgets.
func TestAlertStateSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	leak := alerts.LeakAlert(alerts.Leak{Job: "web", Resource: "rss", Unit: "bytes", RunID: "7", PerRequest: 4096})
	leak.StartsAt = at
	down := alerts.TargetDownAlert("web", "7", "the target exited")
	for _, a := range []alerts.StoredAlert{
		{Alert: leak, Gen: 1},
		{Alert: leak, Gen: 3, Sinks: map[string]alerts.SinkState{"am": {Gen: 3, Delivered: at}}},
		{Alert: down, Gen: 2},
	} {
		if err := s.SaveAlert(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteAlert(down.Fingerprint()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Alerts()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d alerts; want 1: %+v", len(got), got)
	}
	g := got[0]
	if g.Gen != 3 || g.Sinks["am"].Gen != 3 || !g.Sinks["am"].Delivered.Equal(at) ||
		!g.Alert.StartsAt.Equal(at) || g.Alert.Annotations[alerts.AnnotationRunID] != "7" {
		t.Errorf("got %+v; want gen 3, am confirmed gen 3 at %v, run 7", g, at)
	}
}

// TestStateFilesArePrivate: the state directory and the store's
// directories are 0700 and every file in the store 0600, whatever the
// umask.
func TestStateFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.CreateRun("web", TriggerAPI, "x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendSample(id, fullRecord(0)); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(id, StatusCompleted, &model.Report{Verdict: verdict.OverallClean}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseline("web", id, true); err != nil {
		t.Fatal(err)
	}
	if err := s.AddStarted(StartedTarget{PID: 1, StartTicks: 2, Job: "web", RunID: id}); err != nil {
		t.Fatal(err)
	}
	check := func(path string, want os.FileMode) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o; want %o", path, got, want)
		}
	}
	check(dir, 0o700)
	files := 0
	filepath.WalkDir(filepath.Join(dir, FileName), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if d.IsDir() {
			check(path, 0o700)
		} else {
			files++
			check(path, 0o600)
		}
		return nil
	})
	if files < 8 {
		t.Errorf("%d files in the store; want at least 8 (version, lock, last_id, a dictionary, run.json, report.json, samples, the tables)", files)
	}
}
