package store

import (
	"errors"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/model"
)

// A run's kept snapshots are stored with it, served by name, and pruned
// with it; a dropped file (no data) and a name with a path are not found.
func TestEvidenceIsKeptAndPrunedWithTheRun(t *testing.T) {
	s := openTest(t, t.TempDir())
	started := time.Now().Add(-48 * time.Hour)
	id, err := s.CreateRun("web", TriggerAPI, "pid 1", started)
	if err != nil {
		t.Fatal(err)
	}
	rep := &model.Report{Verdict: "leak", Started: started, Ended: started.Add(time.Minute), Where: &model.Where{Evidence: []model.EvidenceFile{
		{Name: "heap-end.pb.gz", Kind: "go-heap", Bytes: 3, Data: []byte("abc")},
		{Name: "big.pb.gz", Kind: "go-heap", CutFromBytes: 1 << 30},
	}}}
	if err := s.FinishRun(id, StatusCompleted, rep, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Evidence(id, "heap-end.pb.gz"); err != nil || string(b) != "abc" {
		t.Errorf("Evidence = %q, %v; want abc", b, err)
	}
	for _, name := range []string{"big.pb.gz", "../soakd.db", "", ".."} {
		if _, err := s.Evidence(id, name); !errors.Is(err, ErrNotFound) {
			t.Errorf("Evidence(%q) error = %v; want ErrNotFound", name, err)
		}
	}
	if n, err := s.Prune(time.Now(), time.Hour, 0); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want the run pruned", n, err)
	}
	if _, err := s.Evidence(id, "heap-end.pb.gz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Evidence after the prune: %v; want ErrNotFound", err)
	}
}
