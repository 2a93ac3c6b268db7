package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Baseline is a job's baseline run: the run its new runs are compared
// with.
type Baseline struct {
	RunID int64
	// Pinned is true when the baseline was pinned through the API or the
	// page; a good run then does not replace it.
	Pinned bool
}

// SetBaseline makes run the job's baseline, pinned or not. A pinned
// baseline is kept from pruning.
func (s *Store) SetBaseline(job string, run int64, pinned bool) error {
	_, err := s.db.ExecContext(context.Background(),
		`INSERT INTO baselines(job, run_id, pinned) VALUES(?, ?, ?)
		ON CONFLICT(job) DO UPDATE SET run_id = excluded.run_id, pinned = excluded.pinned`, job, run, pinned)
	if err != nil {
		return fmt.Errorf("store: setting the baseline of job %s: %w", job, err)
	}
	return nil
}

// JobBaseline returns the job's baseline; ErrNotFound when it has none
// (no good run yet, none pinned, or the baseline run was pruned).
func (s *Store) JobBaseline(job string) (Baseline, error) {
	var b Baseline
	err := s.rdb.QueryRow(`SELECT run_id, pinned FROM baselines WHERE job = ?`, job).Scan(&b.RunID, &b.Pinned)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return b, fmt.Errorf("store: job %s has no baseline: %w", job, ErrNotFound)
	case err != nil:
		return b, fmt.Errorf("store: the baseline of job %s: %w", job, err)
	}
	return b, nil
}

// SaveComparison stores a run's comparison with its baseline: data is the
// comparison's JSON, verdict its overall verdict.
func (s *Store) SaveComparison(run, baseline int64, verdict string, data []byte) error {
	_, err := s.db.ExecContext(context.Background(),
		`INSERT INTO comparisons(run_id, baseline_id, verdict, data) VALUES(?, ?, ?, ?)
		ON CONFLICT(run_id) DO UPDATE SET baseline_id = excluded.baseline_id, verdict = excluded.verdict, data = excluded.data`,
		run, baseline, verdict, data)
	if err != nil {
		return fmt.Errorf("store: saving the comparison of run %d: %w", run, err)
	}
	return nil
}

// Comparison returns a run's comparison with its baseline, as stored;
// ErrNotFound when it has none.
func (s *Store) Comparison(run int64) (baseline int64, data []byte, err error) {
	err = s.rdb.QueryRow(`SELECT baseline_id, data FROM comparisons WHERE run_id = ?`, run).Scan(&baseline, &data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil, fmt.Errorf("store: run %d has no comparison: %w", run, ErrNotFound)
	case err != nil:
		return 0, nil, fmt.Errorf("store: the comparison of run %d: %w", run, err)
	}
	return baseline, data, nil
}
