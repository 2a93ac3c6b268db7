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

// EachSampleChunk calls fn with a run's samples in the order they were
// written, at most size at a time. Unlike EachSample it holds a read
// connection only while it reads a chunk, not while fn runs, so fn may
// take long (write to a slow HTTP client) or read the store itself; the
// slice is reused between calls. A sample written while the walk goes is
// included when its chunk is read. ErrNotFound when the run does not
// exist.
func (s *Store) EachSampleChunk(id int64, size int, fn func([]model.Record) error) error {
	if _, err := s.Run(id); err != nil {
		return err
	}
	size = max(size, 1)
	chunk := make([]model.Record, 0, size)
	after := int64(-1)
	for n := 0; ; {
		var err error
		chunk, after, err = s.sampleChunk(id, after, size, chunk[:0], &n)
		if err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		if err := fn(chunk); err != nil {
			return err
		}
		if len(chunk) < size {
			return nil
		}
	}
}

// sampleChunk appends up to size samples of run id with a row ID above
// after to out, and returns the last row ID read; n counts the samples
// for error messages.
func (s *Store) sampleChunk(id, after int64, size int, out []model.Record, n *int) ([]model.Record, int64, error) {
	rows, err := s.rdb.Query(`SELECT id, data FROM samples WHERE run_id = ? AND id > ? ORDER BY id LIMIT ?`, id, after, size)
	if err != nil {
		return out, after, fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&after, &b); err != nil {
			return out, after, fmt.Errorf("store: samples of run %d: %w", id, err)
		}
		*n++
		r, err := s.codec.decode(b)
		if err != nil {
			return out, after, fmt.Errorf("store: samples of run %d: sample %d: %w", id, *n, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return out, after, fmt.Errorf("store: samples of run %d: %w", id, err)
	}
	return out, after, nil
}
