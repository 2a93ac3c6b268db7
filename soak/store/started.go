package store

import (
	"context"
	"fmt"
)

// StartedTarget is a target process soakd started for a run, identified
// by {PID, start time} so that a PID handed out again is never taken for
// it.
type StartedTarget struct {
	PID        int
	StartTicks uint64 // field 22 of /proc/PID/stat
	Job        string
	RunID      int64
}

// AddStarted records a target soakd started.
func (s *Store) AddStarted(t StartedTarget) error {
	_, err := s.db.ExecContext(context.Background(),
		"INSERT OR REPLACE INTO started(pid, start_ticks, job, run_id) VALUES(?, ?, ?, ?)",
		t.PID, int64(t.StartTicks), t.Job, t.RunID)
	if err != nil {
		return fmt.Errorf("store: recording started target pid %d: %w", t.PID, err)
	}
	return nil
}

// DeleteStarted forgets the targets started for run id: they were stopped.
func (s *Store) DeleteStarted(runID int64) error {
	if _, err := s.db.ExecContext(context.Background(), "DELETE FROM started WHERE run_id = ?", runID); err != nil {
		return fmt.Errorf("store: forgetting the targets of run %d: %w", runID, err)
	}
	return nil
}

// DeleteStartedTarget forgets one started target.
func (s *Store) DeleteStartedTarget(t StartedTarget) error {
	_, err := s.db.ExecContext(context.Background(), "DELETE FROM started WHERE pid = ? AND start_ticks = ?", t.PID, int64(t.StartTicks))
	if err != nil {
		return fmt.Errorf("store: forgetting started target pid %d: %w", t.PID, err)
	}
	return nil
}

// Started returns the recorded targets, oldest run first.
func (s *Store) Started() ([]StartedTarget, error) {
	rows, err := s.rdb.QueryContext(context.Background(), "SELECT pid, start_ticks, job, run_id FROM started ORDER BY run_id, pid")
	if err != nil {
		return nil, fmt.Errorf("store: reading started targets: %w", err)
	}
	defer rows.Close()
	var out []StartedTarget
	for rows.Next() {
		var t StartedTarget
		var ticks int64
		if err := rows.Scan(&t.PID, &ticks, &t.Job, &t.RunID); err != nil {
			return nil, fmt.Errorf("store: reading started targets: %w", err)
		}
		t.StartTicks = uint64(ticks)
		out = append(out, t)
	}
	return out, rows.Err()
}
