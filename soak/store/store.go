// Package store keeps soakd's runs, their samples and their reports in an
// embedded SQLite database (modernc.org/sqlite, pure Go) in WAL mode.
//
// Samples are written one row per call as they come, each in its own
// autocommit transaction: with WAL and synchronous=NORMAL a commit is in
// the WAL file before AppendSample returns, so a kill -9 of soakd loses at
// most the sample being written (a power cut may lose the last few).
//
// The store's memory is fixed, whatever the runs' length: one connection
// writes and ReadConns read, none is ever closed while the store is open,
// and each caches at most CacheKiB of pages (see dsn).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// FileName is the database's name inside the state directory.
const FileName = "soakd.db"

// Run statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusStopped     = "stopped"
	StatusInterrupted = "interrupted"
)

// Run triggers.
const (
	TriggerSchedule = "schedule"
	TriggerAPI      = "api"
)

// ErrNotFound is returned for a run that does not exist, or that has no
// report yet.
var ErrNotFound = errors.New("not found")

// Store is the run database. Its methods are safe for concurrent use.
type Store struct {
	path   string
	db     *sql.DB   // writes: one connection
	rdb    *sql.DB   // reads: ReadConns connections, query_only
	insert *sql.Stmt // one sample, on db
	codec  *codec
}

// Run is one run of a job, without its samples and report.
type Run struct {
	ID      int64     `json:"id"`
	Job     string    `json:"job"`
	Status  string    `json:"status"`  // running, completed, failed, stopped, interrupted
	Trigger string    `json:"trigger"` // schedule, api
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"` // zero (and left out) while running
	Verdict string    `json:"verdict"`
	// Requests is the load's completed requests; RSSPerRequest the RSS
	// slope in bytes per request (0 when not analysed).
	Requests      uint64  `json:"requests"`
	RSSPerRequest float64 `json:"rss_bytes_per_request"`
	Error         string  `json:"error,omitempty"`
	Target        string  `json:"target"` // a description of the target
}

// Open opens (creating if needed) the database in dir, creating dir with
// mode 0700 and the database with mode 0600 (SQLite gives its -wal and
// -shm files the database's mode), and migrates its schema. The runs'
// URLs and reports are nobody else's business.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: creating the state directory %s: %w (choose a writable one with --state-dir)", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: creating %s: %w (choose a writable state directory with --state-dir)", path, err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("store: making %s private (mode 0600): %w", path, err)
	}
	s := &Store{path: path}
	if err := s.init(); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: %s: %w (choose a writable state directory with --state-dir)", path, err)
	}
	return s, nil
}

// Pool sizes and the page cache of each connection.
//
// SQLite's page cache is per connection, 2000 KiB by default, and this
// driver's allocator (modernc.org/libc over modernc.org/memory: mmap'd
// regions outside the Go heap) rounds each cached page (4 KiB plus about
// 250 bytes of header) up to an 8 KiB slot, so a default cache costs
// about 4 MiB once a scan of a long run's samples has filled it. With
// database/sql's default pool (any number open, two kept idle) that was
// two to four such caches, which filled over the first 10 000 to 20 000
// samples of a run: the daemon's step of about 10 MiB. A cache buys
// nothing here: a page view reads a run's samples once, in order, and an
// insert touches the right edge of two B-trees, a few pages.
const (
	// ReadConns is how many connections read at once; more readers wait.
	ReadConns = 2
	// CacheKiB bounds each connection's page cache (PRAGMA cache_size).
	CacheKiB = 256
	// walLimit is the size the WAL file is truncated to after a
	// checkpoint resets it (PRAGMA journal_size_limit): a burst of writes
	// (a prune) does not leave a large file behind.
	walLimit = 4 << 20
)

// dsn sets the pragmas on every connection: WAL, NORMAL synchronisation
// (durable against process crashes), a busy timeout for concurrent
// writers (another soakd on the same directory), a bounded page cache and
// WAL file; the writer takes BEGIN IMMEDIATE for transactions, so that
// two writers never deadlock upgrading a read lock, and the readers are
// query_only.
func dsn(path string, write bool) string {
	d := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)" +
		fmt.Sprintf("&_pragma=cache_size(%d)&_pragma=journal_size_limit(%d)", -CacheKiB, walLimit)
	if write {
		return d + "&_txlock=immediate"
	}
	return d + "&_pragma=query_only(1)"
}

// openPool opens a pool of exactly n connections, kept open: a
// connection closed and reopened would free and reallocate its cache,
// and the allocator keeps what is freed for reuse.
func openPool(path string, write bool, n int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path, write))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return db, nil
}

func (s *Store) init() error {
	ctx := context.Background()
	var err error
	if s.db, err = openPool(s.path, true, 1); err != nil {
		return err
	}
	if err := s.db.PingContext(ctx); err != nil {
		return err
	}
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, want wal (is the directory on a file system that supports shared memory?)", mode)
	}
	if err := migrate(ctx, s.db); err != nil {
		return err
	}
	if s.codec, err = loadCodec(ctx, s.db); err != nil {
		return err
	}
	stmt, err := s.db.PrepareContext(ctx, "INSERT INTO samples(run_id, data) VALUES(?, ?)")
	if err != nil {
		return err
	}
	s.insert = stmt
	if s.rdb, err = openPool(s.path, false, ReadConns); err != nil {
		return err
	}
	return s.rdb.PingContext(ctx)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	if s.insert != nil {
		s.insert.Close()
	}
	if s.codec != nil {
		s.codec.close()
	}
	var err error
	if s.rdb != nil {
		err = s.rdb.Close()
	}
	if s.db != nil {
		err = errors.Join(s.db.Close(), err)
	}
	return err
}

// ProbeWrite writes and removes a row in one transaction: it fails as a
// real write would when the disk is full or the database read-only, so a
// daemon that saw writes fail can tell when they work again.
func (s *Store) ProbeWrite() error {
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("INSERT OR REPLACE INTO alerts(fingerprint, data) VALUES('~probe', x'00')"); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	if _, err := tx.Exec("DELETE FROM alerts WHERE fingerprint = '~probe'"); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	return nil
}
