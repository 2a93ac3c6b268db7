package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes the schema from version i to i+1 (PRAGMA
// user_version). Append to it; never edit a released step.
var migrations = []string{
	`CREATE TABLE runs (
		id              INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused after a prune
		job             TEXT    NOT NULL,
		status          TEXT    NOT NULL,
		trigger         TEXT    NOT NULL,
		target          TEXT    NOT NULL DEFAULT '',
		started_ns      INTEGER NOT NULL,
		ended_ns        INTEGER NOT NULL DEFAULT 0,
		verdict         TEXT    NOT NULL DEFAULT '',
		requests        INTEGER NOT NULL DEFAULT 0,
		rss_per_request REAL    NOT NULL DEFAULT 0,
		error           TEXT    NOT NULL DEFAULT '',
		report          BLOB
	);
	CREATE INDEX runs_job ON runs(job, id);
	CREATE INDEX runs_status ON runs(status);
	CREATE TABLE samples (
		id     INTEGER PRIMARY KEY,
		run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		data   BLOB    NOT NULL -- a soak.Record: JSON, or zstd of it with a dicts entry
	);
	CREATE TABLE dicts (
		id      INTEGER PRIMARY KEY, -- the zstd dictionary ID in each frame
		content BLOB    NOT NULL     -- a raw zstd dictionary: a typical record's JSON
	);
	CREATE INDEX samples_run ON samples(run_id, id);`,
	// Version 2: the alert manager's state, so that a restarted soakd
	// re-sends what still fires and resolves what no longer does.
	`CREATE TABLE alerts (
		fingerprint TEXT PRIMARY KEY, -- alertname/job/resource
		data        BLOB NOT NULL     -- an alerts.StoredAlert as JSON
	);`,
	// Version 3: the targets soakd started, so that a soakd killed in
	// the middle of a run stops, at its next start, any that survived.
	`CREATE TABLE started (
		pid         INTEGER NOT NULL,
		start_ticks INTEGER NOT NULL, -- field 22 of /proc/PID/stat
		job         TEXT    NOT NULL,
		run_id      INTEGER NOT NULL,
		PRIMARY KEY (pid, start_ticks)
	);`,
	// Version 4: each job's baseline run (the last good run, or one
	// pinned), and each run's comparison with the baseline it had.
	`CREATE TABLE baselines (
		job    TEXT    PRIMARY KEY,
		run_id INTEGER NOT NULL,
		pinned INTEGER NOT NULL DEFAULT 0 -- 1: pinned through the API; a good run does not replace it
	);
	CREATE TABLE comparisons (
		run_id      INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
		baseline_id INTEGER NOT NULL,
		verdict     TEXT    NOT NULL,
		data        BLOB    NOT NULL -- a compare.Result as JSON
	);`,
}

// SchemaVersion is the schema version this package writes: len(migrations).
const SchemaVersion = 4

// migrate brings the database up to SchemaVersion, one transaction per
// step.
func migrate(ctx context.Context, db *sql.DB) error {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this soakd's %d: run a newer soakd, or use another --state-dir", v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if err := step(ctx, db, v); err != nil {
			return fmt.Errorf("migrating the schema from version %d to %d: %w", v, v+1, err)
		}
	}
	return nil
}

func step(ctx context.Context, db *sql.DB, v int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return err
	}
	return tx.Commit()
}
