package store

import (
	"testing"
	"time"

	"github.com/soakd/soakd/soak/model"
)

// TestEachSampleChunk walks a run in chunks: every sample once, in order,
// no chunk larger than asked, and another run's samples left out.
func TestEachSampleChunk(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, err := s.CreateRun("web", TriggerAPI, "pid 1", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateRun("other", TriggerAPI, "pid 2", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const n = 23
	for i := range n {
		for _, run := range []int64{id, other} {
			r := fullRecord(i)
			if run == other {
				r.Requests = 0
			}
			if err := s.AppendSample(run, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, size := range []int{1, 5, 23, 100} {
		var got []uint64
		chunks := 0
		err := s.EachSampleChunk(id, size, func(recs []model.Record) error {
			chunks++
			if len(recs) > size {
				t.Errorf("size %d: a chunk of %d", size, len(recs))
			}
			for _, r := range recs {
				got = append(got, r.Requests)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if len(got) != n {
			t.Fatalf("size %d: %d samples; want %d", size, len(got), n)
		}
		for i, req := range got {
			if want := fullRecord(i).Requests; req != want {
				t.Fatalf("size %d: sample %d has requests %d; want %d (order, or another run's)", size, i, req, want)
			}
		}
		if want := (n + size - 1) / size; chunks != want && chunks != want+1 {
			t.Errorf("size %d: %d chunks; want %d", size, chunks, want)
		}
	}
	if err := s.EachSampleChunk(999, 10, func([]model.Record) error { return nil }); err == nil {
		t.Error("run 999: no error; want ErrNotFound")
	}
}
