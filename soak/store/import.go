package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ImportRun writes a run of another store with its own ID and report
// (nil: none), for soakd-migrate-store; its samples follow with
// AppendSample. A run of that ID already here is an error. Later runs get
// higher IDs.
func (s *Store) ImportRun(r Run, report []byte) error {
	err := s.locked(func() error {
		if err := os.Mkdir(s.runDir(r.ID), 0o700); err != nil {
			return err
		}
		if report != nil {
			if err := writeAtomic(filepath.Join(s.runDir(r.ID), reportFile), report); err != nil {
				return err
			}
		}
		rec := runRecord{ID: r.ID, Job: r.Job, Status: r.Status, Trigger: r.Trigger, Target: r.Target,
			StartedNs: r.Started.UnixNano(), Verdict: r.Verdict, Requests: r.Requests, RSSPerRequest: r.RSSPerRequest, Error: r.Error}
		if !r.Ended.IsZero() {
			rec.EndedNs = r.Ended.UnixNano()
		}
		if err := s.writeRun(rec); err != nil {
			return err
		}
		return s.reserveIDs(r.ID)
	})
	if err != nil {
		return fmt.Errorf("store: importing run %d: %w", r.ID, err)
	}
	return nil
}

// ReserveRunIDs makes every later run's ID higher than last: the IDs an
// imported store handed out to runs since pruned are not reused.
func (s *Store) ReserveRunIDs(last int64) error {
	if err := s.locked(func() error { return s.reserveIDs(last) }); err != nil {
		return fmt.Errorf("store: reserving run IDs up to %d: %w", last, err)
	}
	return nil
}

// reserveIDs raises the last ID handed out to at least last. Call it
// locked.
func (s *Store) reserveIDs(last int64) error {
	path := filepath.Join(s.root, lastIDFile)
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if cur, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && cur >= last {
		return nil
	}
	return writeAtomic(path, []byte(strconv.FormatInt(last, 10)+"\n"))
}
