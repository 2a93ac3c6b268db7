package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/soakd/soakd/soak/model"
)

// evidenceDir is where a run's snapshot files live: beside the store,
// under evidence/RUN_ID/. Each run's files are bounded by the run itself
// (runner.Options.EvidenceLimit, 8 MiB by default) and go with its prune.
func (s *Store) evidenceDir(runID int64) string {
	return filepath.Join(s.dir, model.EvidenceDir, strconv.FormatInt(runID, 10))
}

// saveEvidence writes the report's kept snapshot files for runID.
func (s *Store) saveEvidence(runID int64, rep *model.Report) error {
	if rep == nil || rep.Where == nil || len(rep.Where.Evidence) == 0 {
		return nil
	}
	dir := s.evidenceDir(runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: run %d's evidence: %w", runID, err)
	}
	for _, f := range rep.Where.Evidence {
		if f.Data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Name)), f.Data, 0o600); err != nil {
			return fmt.Errorf("store: run %d's evidence: %w", runID, err)
		}
	}
	return nil
}

// Evidence returns one of a run's snapshot files; ErrNotFound when the
// run kept no file of that name.
func (s *Store) Evidence(runID int64, name string) ([]byte, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return nil, ErrNotFound
	}
	b, err := os.ReadFile(filepath.Join(s.evidenceDir(runID), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	return b, err
}

// deleteEvidence removes a pruned run's snapshot files.
func (s *Store) deleteEvidence(runID int64) error {
	return os.RemoveAll(s.evidenceDir(runID))
}
