package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Baseline is a job's baseline run: the run its new runs are compared
// with.
type Baseline struct {
	RunID int64 `json:"run_id"`
	// Pinned is true when the baseline was pinned through the API or the
	// page; a good run then does not replace it.
	Pinned bool `json:"pinned"`
}

// SetBaseline makes run the job's baseline, pinned or not. A pinned
// baseline is kept from pruning.
func (s *Store) SetBaseline(job string, run int64, pinned bool) error {
	err := updateTable(s, baselinesFile, func(m *map[string]Baseline) {
		if *m == nil {
			*m = map[string]Baseline{}
		}
		(*m)[job] = Baseline{RunID: run, Pinned: pinned}
	})
	if err != nil {
		return fmt.Errorf("store: setting the baseline of job %s: %w", job, err)
	}
	return nil
}

// JobBaseline returns the job's baseline; ErrNotFound when it has none
// (no good run yet, none pinned, or the baseline run was pruned).
func (s *Store) JobBaseline(job string) (Baseline, error) {
	m, err := s.baselines()
	if err != nil {
		return Baseline{}, fmt.Errorf("store: the baseline of job %s: %w", job, err)
	}
	b, ok := m[job]
	if !ok {
		return b, fmt.Errorf("store: job %s has no baseline: %w", job, ErrNotFound)
	}
	return b, nil
}

func (s *Store) baselines() (map[string]Baseline, error) {
	var m map[string]Baseline
	err := s.readTable(baselinesFile, &m)
	return m, err
}

// dropBaselineRun removes the baselines that are run id. Call it locked.
func (s *Store) dropBaselineRun(id int64) error {
	m, err := s.baselines()
	if err != nil {
		return err
	}
	n := len(m)
	for job, b := range m {
		if b.RunID == id {
			delete(m, job)
		}
	}
	if len(m) == n {
		return nil
	}
	return s.writeTable(baselinesFile, m)
}

// comparisonRecord is a run's comparison.json.
type comparisonRecord struct {
	BaselineID int64  `json:"baseline_id"`
	Verdict    string `json:"verdict"`
	Data       []byte `json:"data"` // a compare.Result as JSON, kept byte for byte
}

// SaveComparison stores a run's comparison with its baseline: data is the
// comparison's JSON, verdict its overall verdict.
func (s *Store) SaveComparison(run, baseline int64, verdict string, data []byte) error {
	err := s.locked(func() error {
		if _, err := s.readRun(run); err != nil {
			return err
		}
		b, err := json.Marshal(comparisonRecord{BaselineID: baseline, Verdict: verdict, Data: data})
		if err != nil {
			return err
		}
		return writeAtomic(filepath.Join(s.runDir(run), comparisonFile), b)
	})
	if err != nil {
		return fmt.Errorf("store: saving the comparison of run %d: %w", run, err)
	}
	return nil
}

// Comparison returns a run's comparison with its baseline, as stored;
// ErrNotFound when it has none.
func (s *Store) Comparison(run int64) (baseline int64, data []byte, err error) {
	b, err := os.ReadFile(filepath.Join(s.runDir(run), comparisonFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil, fmt.Errorf("store: run %d has no comparison: %w", run, ErrNotFound)
	case err != nil:
		return 0, nil, fmt.Errorf("store: the comparison of run %d: %w", run, err)
	}
	var c comparisonRecord
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, nil, fmt.Errorf("store: the comparison of run %d: %w", run, err)
	}
	return c.BaselineID, c.Data, nil
}
