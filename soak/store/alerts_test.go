package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/soakd/soakd/alerts"
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

// TestStateFilesArePrivate: the state directory is 0700 and the database
// and its WAL files 0600, whatever the umask.
func TestStateFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRun("web", TriggerAPI, "x", time.Now()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
	for _, f := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		check(filepath.Join(dir, f), 0o600)
	}
}
