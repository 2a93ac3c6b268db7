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
	if _, err := s.Run(id); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT data FROM samples WHERE run_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	defer rows.Close()
	recs := []model.Record{}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("store: samples of run %d: %w", id, err)
		}
		r, err := s.codec.decode(b)
		if err != nil {
			return nil, fmt.Errorf("store: samples of run %d: sample %d: %w", id, len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	return recs, nil
}
