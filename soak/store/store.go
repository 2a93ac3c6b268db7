// Package store keeps soakd's runs, their samples and their reports in
// plain files under one directory of the state directory (FileName), with
// no database engine: each run is a directory, its metadata and report
// JSON files replaced atomically (written to a temporary file, synced,
// renamed over the old one), its samples one append-only file of framed,
// checksummed records.
//
// A sample is one write(2) to its run's file, with no fsync, as SQLite's
// WAL with synchronous=NORMAL did before: once AppendSample returns the
// sample is in the kernel's page cache, so a kill -9 of soakd loses at
// most the sample being written (a power cut may lose the last few). A
// frame cut short by a crash is the end of the run's samples: readers stop
// there and the next writer truncates it away.
//
// Readers take no lock, so another process (soakd export) reads a store
// a running soakd writes. Writers that change a shared file (a new run's
// ID, the alerts, the started targets, the baselines, the dictionaries)
// hold an flock(2) on the store's lock file, so two soakd on one
// directory do not lose each other's writes.
//
// The store's memory is fixed, whatever the runs' length: reads stream a
// run's samples file a frame at a time, and writes keep one open file per
// running run.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FileName is the store's directory inside the state directory.
const FileName = "store"

// LegacyFileName is the SQLite database of soakd before the file store.
// Open refuses a state directory that holds one (see docs/daemon-ops.md).
const LegacyFileName = "soakd.db"

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// SchemaVersion is the version of the store's layout this package writes,
// in the file "version"; a store of a newer version is refused.
const SchemaVersion = 1

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

// Store is the run store. Its methods are safe for concurrent use.
type Store struct {
	dir   string // the state directory
	root  string // dir/FileName
	lock  *os.File
	codec *codec

	mu sync.Mutex // serialises the writers of shared files, with lock across processes

	appMu sync.Mutex            // guards files
	files map[int64]*sampleFile // the samples files open for append, by run
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

// Open opens (creating if needed) the store in dir, creating dir and the
// store's directories with mode 0700 and its files with mode 0600: the
// runs' URLs and reports are nobody else's business. A state directory
// that holds an SQLite store of an older soakd is refused, with what to
// do.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: creating the state directory %s: %w (choose a writable one with --state-dir)", dir, err)
	}
	if err := checkLegacy(dir); err != nil {
		return nil, err
	}
	root := filepath.Join(dir, FileName)
	for _, d := range []string{root, filepath.Join(root, runsDir), filepath.Join(root, dictsDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("store: creating %s: %w (choose a writable state directory with --state-dir)", d, err)
		}
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return nil, fmt.Errorf("store: making %s private (mode 0700): %w", root, err)
	}
	s := &Store{dir: dir, root: root, files: map[int64]*sampleFile{}}
	if err := s.init(); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: %s: %w (choose a writable state directory with --state-dir)", root, err)
	}
	return s, nil
}

// checkLegacy refuses a state directory with an SQLite store in it: its
// runs would otherwise be silently left out.
func checkLegacy(dir string) error {
	path := filepath.Join(dir, LegacyFileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: reading %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != sqliteHeader {
		return nil // empty or not SQLite: holds no runs
	}
	return fmt.Errorf("store: %s is the SQLite run store of an older soakd, which this soakd does not read: "+
		"convert it with `go run ./cmd/soakd-migrate-store --state-dir %s` from soakd's source, "+
		"or move it out of the state directory to start with no runs (docs/daemon-ops.md)", path, dir)
}

func (s *Store) init() error {
	var err error
	if s.lock, err = os.OpenFile(filepath.Join(s.root, "lock"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return err
	}
	if err := s.checkVersion(); err != nil {
		return err
	}
	s.removeDeleted()
	s.codec, err = s.loadCodec()
	return err
}

// checkVersion writes the layout's version into a new store and refuses a
// newer one.
func (s *Store) checkVersion() error {
	path := filepath.Join(s.root, "version")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s.locked(func() error {
			return writeAtomic(path, []byte(strconv.Itoa(SchemaVersion)+"\n"))
		})
	}
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%s holds %q, not a version number: the store is damaged; move it aside to start with no runs", path, bytes.TrimSpace(b))
	}
	if v > SchemaVersion {
		return fmt.Errorf("store version %d is newer than this soakd's %d: run a newer soakd, or use another --state-dir", v, SchemaVersion)
	}
	return nil
}

// locked runs fn holding the store's locks: the mutex within this
// process, the flock across processes.
func (s *Store) locked(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := syscall.Flock(int(s.lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the store: %w", err)
	}
	defer syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	return fn()
}

// Path is the store's directory.
func (s *Store) Path() string { return s.root }

// Close closes the store's open files.
func (s *Store) Close() error {
	var err error
	s.appMu.Lock()
	for id, f := range s.files {
		err = errors.Join(err, f.f.Close())
		delete(s.files, id)
	}
	s.appMu.Unlock()
	if s.codec != nil {
		s.codec.close()
		s.codec = nil
	}
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close())
		s.lock = nil
	}
	return err
}

// ProbeWrite writes, syncs and removes a small file in the store: it
// fails as a real write would when the disk is full or the file system
// read-only, so a daemon that saw writes fail can tell when they work
// again.
func (s *Store) ProbeWrite() error {
	path := filepath.Join(s.root, ".probe")
	defer os.Remove(path)
	if err := writeAtomic(path, bytes.Repeat([]byte{0}, 4096)); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	return nil
}

// writeAtomic writes b to path through a temporary file in the same
// directory, synced and renamed over path, with mode 0600: a crash leaves
// the old file or the new one, never a part.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
