package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/model"
)

// TestWriteWhileWalking writes samples from inside a walk of the same
// run's samples: readers hold no lock a writer waits on.
func TestWriteWhileWalking(t *testing.T) {
	s := openTest(t, t.TempDir())
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	if err := s.AppendSample(id, fullRecord(0)); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := s.EachSample(id, func(model.Record) error {
		n++
		return s.AppendSample(id, fullRecord(n))
	})
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Samples(id); len(recs) < 2 {
		t.Errorf("%d samples after writing inside the walk; want at least 2", len(recs))
	}
}

// TestTornTail: a frame cut short at the end of a samples file (a crash
// in the middle of a write) is where the samples end; the next writer
// cuts it off and its samples follow the last whole one.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	id, _ := s.CreateRun("web", TriggerSchedule, "", time.Now())
	for i := range 3 {
		if err := s.AppendSample(id, fullRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	path := filepath.Join(dir, FileName, runsDir, "1", samplesFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	third := b[len(b)/3*2:]
	long := append(append([]byte{}, third[:frameHeader]...), make([]byte, 4096)...) // longer than any new frame
	for _, torn := range [][]byte{third[:5], third[:frameHeader+3], long} {
		if err := os.WriteFile(path, append(append([]byte{}, b...), torn...), 0o600); err != nil {
			t.Fatal(err)
		}
		s := openTest(t, dir)
		if recs, err := s.Samples(id); err != nil || len(recs) != 3 {
			t.Fatalf("torn tail of %d bytes: %d samples, %v; want the 3 whole ones", len(torn), len(recs), err)
		}
		if err := s.AppendSample(id, fullRecord(3)); err != nil {
			t.Fatal(err)
		}
		recs, err := s.Samples(id)
		if err != nil || len(recs) != 4 || recs[3].Requests != fullRecord(3).Requests {
			t.Fatalf("torn tail of %d bytes, then a sample: %d samples, %v; want 4, the last one the new one", len(torn), len(recs), err)
		}
		if f, err := os.Open(path); err == nil {
			end, _ := validEnd(f)
			fi, _ := f.Stat()
			f.Close()
			if fi.Size() != end {
				t.Errorf("torn tail of %d bytes, then a sample: the file is %d bytes, its frames end at %d; want the torn part cut off", len(torn), fi.Size(), end)
			}
		}
		s.Close()
	}
}

// TestLegacyStoreRefused: a state directory with an older soakd's SQLite
// store is refused with the file's name and what to do, not silently
// started empty; an empty soakd.db (holding nothing) is no obstacle.
func TestLegacyStoreRefused(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, LegacyFileName)
	if err := os.WriteFile(legacy, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open beside an empty %s: %v", LegacyFileName, err)
	}
	s.Close()
	if err := os.WriteFile(legacy, append([]byte(sqliteHeader), make([]byte, 4080)...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if err == nil {
		t.Fatal("Open beside an SQLite store: no error")
	}
	for _, want := range []string{legacy, "soakd-migrate-store --state-dir " + dir, "move it", "docs/daemon-ops.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
