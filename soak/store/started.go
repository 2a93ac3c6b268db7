package store

import (
	"cmp"
	"fmt"
	"slices"
)

// StartedTarget is a target process soakd started for a run, identified
// by {PID, start time} so that a PID handed out again is never taken for
// it.
type StartedTarget struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"` // field 22 of /proc/PID/stat
	Job        string `json:"job"`
	RunID      int64  `json:"run_id"`
}

// AddStarted records a target soakd started.
func (s *Store) AddStarted(t StartedTarget) error {
	err := updateTable(s, startedFile, func(ts *[]StartedTarget) {
		*ts = slices.DeleteFunc(*ts, func(o StartedTarget) bool { return o.PID == t.PID && o.StartTicks == t.StartTicks })
		*ts = append(*ts, t)
	})
	if err != nil {
		return fmt.Errorf("store: recording started target pid %d: %w", t.PID, err)
	}
	return nil
}

// DeleteStarted forgets the targets started for run id: they were stopped.
func (s *Store) DeleteStarted(runID int64) error {
	err := updateTable(s, startedFile, func(ts *[]StartedTarget) {
		*ts = slices.DeleteFunc(*ts, func(o StartedTarget) bool { return o.RunID == runID })
	})
	if err != nil {
		return fmt.Errorf("store: forgetting the targets of run %d: %w", runID, err)
	}
	return nil
}

// DeleteStartedTarget forgets one started target.
func (s *Store) DeleteStartedTarget(t StartedTarget) error {
	err := updateTable(s, startedFile, func(ts *[]StartedTarget) {
		*ts = slices.DeleteFunc(*ts, func(o StartedTarget) bool { return o.PID == t.PID && o.StartTicks == t.StartTicks })
	})
	if err != nil {
		return fmt.Errorf("store: forgetting started target pid %d: %w", t.PID, err)
	}
	return nil
}

// Started returns the recorded targets, oldest run first.
func (s *Store) Started() ([]StartedTarget, error) {
	var ts []StartedTarget
	if err := s.readTable(startedFile, &ts); err != nil {
		return nil, fmt.Errorf("store: reading started targets: %w", err)
	}
	slices.SortFunc(ts, func(a, b StartedTarget) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.PID, b.PID))
	})
	return ts, nil
}
