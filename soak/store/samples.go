package store

import (
	"fmt"

	"github.com/soakd/soakd/soak/model"
)

// AppendSample stores one sample of a run (compressed JSON, see codec) in
// its own autocommit transaction through a prepared statement.
func (s *Store) AppendSample(runID int64, rec model.Record) error {
	b, err := s.codec.encode(rec)
	if err != nil {
		return fmt.Errorf("store: run %d: encoding a sample: %w", runID, err)
	}
	if _, err := s.insert.Exec(runID, b); err != nil {
		return fmt.Errorf("store: run %d: writing a sample: %w", runID, err)
	}
	return nil
}

// Samples returns a run's samples in the order they were written;
// ErrNotFound when the run does not exist.
func (s *Store) Samples(id int64) ([]model.Record, error) {
	recs := []model.Record{}
	err := s.EachSample(id, func(r model.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// EachSample calls fn with each of a run's samples in the order they were
// written, decoding one at a time, so that a caller that keeps a bounded
// part of a long run (the live page's charts) never holds all of it. An
// error from fn stops the walk and is returned. ErrNotFound when the run
// does not exist. The walk holds one of the ReadConns connections: fn
// must not read from the store, or walks at once could wait on each other.
func (s *Store) EachSample(id int64, fn func(model.Record) error) error {
	if _, err := s.Run(id); err != nil {
		return err
	}
	rows, err := s.rdb.Query(`SELECT data FROM samples WHERE run_id = ? ORDER BY id`, id)
	if err != nil {
		return fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return fmt.Errorf("store: samples of run %d: %w", id, err)
		}
		n++
		r, err := s.codec.decode(b)
		if err != nil {
			return fmt.Errorf("store: samples of run %d: sample %d: %w", id, n, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	return nil
}
