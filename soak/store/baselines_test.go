package store

import (
	"errors"
	"testing"
	"time"
)

// TestBaselines: a job's baseline is set and replaced; a pinned one
// survives pruning, and a pruned run's comparison and (unpinned)
// baseline go with it.
func TestBaselines(t *testing.T) {
	s := openTest(t, t.TempDir())
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		id, _ := s.CreateRun("a", TriggerSchedule, "", now.Add(time.Duration(i-10)*24*time.Hour))
		s.FinishRun(id, StatusCompleted, nil, nil)
	}
	if _, err := s.JobBaseline("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("JobBaseline before any = %v; want ErrNotFound", err)
	}
	if err := s.SetBaseline("a", 2, false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBaseline("a", 1, true); err != nil {
		t.Fatal(err)
	}
	if b, err := s.JobBaseline("a"); err != nil || b != (Baseline{RunID: 1, Pinned: true}) {
		t.Fatalf("JobBaseline = %+v, %v; want run 1 pinned", b, err)
	}
	if err := s.SaveComparison(3, 1, "same", []byte(`{"verdict":"same"}`)); err != nil {
		t.Fatal(err)
	}
	if base, data, err := s.Comparison(3); err != nil || base != 1 || string(data) != `{"verdict":"same"}` {
		t.Fatalf("Comparison(3) = %d, %s, %v; want 1 and the JSON", base, data, err)
	}
	if _, err := s.Prune(now, 24*time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	runs, _ := s.Runs("a", 0)
	if len(runs) != 1 || runs[0].ID != 1 {
		t.Fatalf("after pruning every run by age, runs %v remain; want the pinned baseline, run 1, alone", runs)
	}
	if _, _, err := s.Comparison(3); !errors.Is(err, ErrNotFound) {
		t.Errorf("the pruned run's comparison: %v; want ErrNotFound", err)
	}
}
