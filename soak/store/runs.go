package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/soakd/soakd/soak/model"
)

const runColumns = `id, job, status, trigger, target, started_ns, ended_ns, verdict, requests, rss_per_request, error`

// CreateRun records a new run in status "running" and returns its ID.
// IDs are never reused, even after a prune.
func (s *Store) CreateRun(job, trigger, target string, started time.Time) (int64, error) {
	res, err := s.db.Exec(`INSERT INTO runs(job, status, trigger, target, started_ns) VALUES(?, ?, ?, ?, ?)`,
		job, StatusRunning, trigger, target, started.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("store: creating a run of %s: %w", job, err)
	}
	return res.LastInsertId()
}

// FinishRun ends a run: its status, the report as JSON, its verdict,
// request count and RSS slope per request, and the error that ended it, if
// any. rep may be nil (the run failed before it had one). The end time is
// the report's, else now. A report that cannot be encoded (a NaN) is left
// out, with why in the run's error, and the run is still ended; the
// encoding error is returned.
func (s *Store) FinishRun(runID int64, status string, rep *model.Report, runErr error) error {
	switch status {
	case StatusCompleted, StatusFailed, StatusStopped, StatusInterrupted:
	default:
		return fmt.Errorf("store: finishing run %d: status %q is not completed, failed, stopped or interrupted", runID, status)
	}
	f := finish{status: status, ended: time.Now()}
	if runErr != nil {
		f.errText = runErr.Error()
	}
	var encErr error
	if rep != nil {
		if err := f.fromReport(rep); err != nil {
			encErr = fmt.Errorf("store: finishing run %d: %w", runID, err)
			f = finish{status: status, ended: f.ended, errText: joinText(f.errText, "the report was not stored: "+err.Error())}
		}
	}
	res, err := s.db.Exec(`UPDATE runs SET status = ?, ended_ns = ?, verdict = ?, requests = ?, rss_per_request = ?, error = ?, report = ? WHERE id = ?`,
		f.status, f.ended.UnixNano(), f.verdict, int64(f.requests), f.rssPerRequest, f.errText, f.report, runID)
	if err != nil {
		return fmt.Errorf("store: finishing run %d: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: finishing run %d: %w", runID, ErrNotFound)
	}
	return encErr
}

// joinText joins two error texts with "; ", either of which may be empty.
func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// finish is the row update of FinishRun.
type finish struct {
	status, verdict, errText string
	ended                    time.Time
	requests                 uint64
	rssPerRequest            float64
	report                   []byte
}

func (f *finish) fromReport(rep *model.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	f.report, f.verdict = b, rep.Verdict
	if !rep.Ended.IsZero() {
		f.ended = rep.Ended
	}
	switch {
	case rep.Load != nil:
		f.requests = rep.Load.Requests
	case len(rep.Records) > 0:
		f.requests = rep.Records[len(rep.Records)-1].Requests
	}
	if r, ok := rep.Resources["rss"]; ok {
		f.rssPerRequest = r.PerRequest
	}
	return nil
}

// Run returns one run; ErrNotFound when there is none with that ID.
func (s *Store) Run(id int64) (Run, error) {
	row := s.rdb.QueryRow(`SELECT `+runColumns+` FROM runs WHERE id = ?`, id)
	r, err := scanRun(row)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("store: run %d: %w", id, err)
	}
	return r, nil
}

// Runs returns the newest runs first, of one job or of all when job is "",
// at most limit of them (limit <= 0: all).
func (s *Store) Runs(job string, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.rdb.Query(`SELECT `+runColumns+` FROM runs WHERE ? = '' OR job = ? ORDER BY id DESC LIMIT ?`, job, job, limit)
	if err != nil {
		return nil, fmt.Errorf("store: listing runs: %w", err)
	}
	defer rows.Close()
	runs := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing runs: %w", err)
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(sc scanner) (Run, error) {
	var r Run
	var started, ended, requests int64
	err := sc.Scan(&r.ID, &r.Job, &r.Status, &r.Trigger, &r.Target, &started, &ended, &r.Verdict, &requests, &r.RSSPerRequest, &r.Error)
	r.Started = time.Unix(0, started)
	if ended != 0 {
		r.Ended = time.Unix(0, ended)
	}
	r.Requests = uint64(requests)
	return r, err
}

// ReportJSON returns the stored report of a run; ErrNotFound when the run
// does not exist or has no report yet.
func (s *Store) ReportJSON(id int64) ([]byte, error) {
	var b []byte
	err := s.rdb.QueryRow(`SELECT report FROM runs WHERE id = ?`, id).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: run %d: %w", id, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("store: report of run %d: %w", id, err)
	case b == nil:
		return nil, fmt.Errorf("store: run %d has no report yet: %w", id, ErrNotFound)
	}
	return b, nil
}

// MarkInterrupted marks the runs that a crash left "running" as
// "interrupted" and returns their IDs, oldest first, with those of
// interrupted runs never finished (a crash or an error while they were
// being analysed), so that no run stays without a report. Call it at
// start-up, before any run starts; then analyse each over its samples and
// FinishRun it.
func (s *Store) MarkInterrupted() ([]int64, error) {
	rows, err := s.db.Query(`UPDATE runs SET status = ? WHERE status = ? OR (status = ? AND ended_ns = 0) RETURNING id`,
		StatusInterrupted, StatusRunning, StatusInterrupted)
	if err != nil {
		return nil, fmt.Errorf("store: marking interrupted runs: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: marking interrupted runs: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: marking interrupted runs: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// Prune deletes finished runs, with their samples, that started before
// now-maxAge or that are beyond the newest maxRunsPerJob of their job,
// except a job's pinned baseline. A
// zero bound is no bound. Running runs are never deleted. It returns the
// number of runs deleted. Each run goes in its own transaction, so that
// sample writes are never held up long.
func (s *Store) Prune(now time.Time, maxAge time.Duration, maxRunsPerJob int) (int, error) {
	ids, err := s.prunable(now, maxAge, maxRunsPerJob)
	if err != nil {
		return 0, fmt.Errorf("store: prune: %w", err)
	}
	for i, id := range ids {
		if err := s.deleteRun(id); err != nil {
			return i, fmt.Errorf("store: prune: run %d: %w", id, err)
		}
	}
	return len(ids), nil
}

func (s *Store) prunable(now time.Time, maxAge time.Duration, maxRunsPerJob int) ([]int64, error) {
	cutoff := int64(-1 << 63)
	if maxAge > 0 {
		cutoff = now.Add(-maxAge).UnixNano()
	}
	if maxRunsPerJob <= 0 {
		maxRunsPerJob = -1
	}
	rows, err := s.rdb.Query(`SELECT id FROM (
			SELECT id, status, started_ns, ROW_NUMBER() OVER (PARTITION BY job ORDER BY id DESC) AS n FROM runs)
		WHERE status != ? AND (started_ns < ? OR (? > 0 AND n > ?))
			AND id NOT IN (SELECT run_id FROM baselines WHERE pinned = 1) ORDER BY id`,
		StatusRunning, cutoff, maxRunsPerJob, maxRunsPerJob)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *Store) deleteRun(id int64) error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM samples WHERE run_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM comparisons WHERE run_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM baselines WHERE run_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ? AND status != ?`, id, StatusRunning); err != nil {
		return err
	}
	return tx.Commit()
}
