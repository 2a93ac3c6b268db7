// Command soakd-migrate-store converts the SQLite run store of an older
// soakd (<state_dir>/soakd.db) into the file store of this one
// (<state_dir>/store/), keeping the run IDs, and then renames soakd.db to
// soakd.db.migrated. It is a command of its own so that the soakd binary
// carries no SQLite (issue 44, item 2; docs/daemon-ops.md).
//
//	go run ./cmd/soakd-migrate-store [--state-dir DIR]
//
// Stop soakd first. On an error the new store is removed and soakd.db is
// left as it was.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/spf13/pflag"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/soak/config"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("soakd-migrate-store", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", config.DefaultStateDir, "the state directory that holds soakd.db")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "soakd-migrate-store: unexpected argument %q; the only flag is --state-dir DIR\n", fs.Arg(0))
		return 2
	}
	n, err := migrate(*stateDir)
	if err != nil {
		fmt.Fprintln(stderr, "soakd-migrate-store:", err)
		return 1
	}
	fmt.Fprintf(stdout, "migrated %d runs, %d samples from %s to %s; the old file is now %s.migrated\n",
		n.runs, n.samples, filepath.Join(*stateDir, store.LegacyFileName), filepath.Join(*stateDir, store.FileName), store.LegacyFileName)
	return 0
}

// counts is what a migration copied.
type counts struct{ runs, samples int }

// migrate moves soakd.db aside (store.Open refuses a directory with it),
// copies it into a new store, and names it soakd.db.migrated; on an error
// it puts it back and removes the new store.
func migrate(dir string) (counts, error) {
	legacy := filepath.Join(dir, store.LegacyFileName)
	if _, err := os.Stat(legacy); err != nil {
		return counts{}, fmt.Errorf("no SQLite store to migrate: %w (set --state-dir)", err)
	}
	newStore := filepath.Join(dir, store.FileName)
	if _, err := os.Stat(newStore); err == nil {
		return counts{}, fmt.Errorf("%s exists already: this command does not merge stores; move it aside first", newStore)
	}
	if err := checkpoint(legacy); err != nil {
		return counts{}, fmt.Errorf("%s: %w (is a soakd still running on it? stop it first)", legacy, err)
	}
	moving := legacy + ".migrating"
	if err := os.Rename(legacy, moving); err != nil {
		return counts{}, err
	}
	n, err := copyStore(moving, dir)
	if err != nil {
		os.RemoveAll(newStore)
		if rerr := os.Rename(moving, legacy); rerr != nil {
			err = errors.Join(err, fmt.Errorf("putting %s back: %w", legacy, rerr))
		}
		return n, err
	}
	return n, os.Rename(moving, legacy+".migrated")
}

// checkpoint writes SQLite's WAL into the database file, so that the file
// alone holds every committed write.
func checkpoint(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

func copyStore(path, dir string) (counts, error) {
	var n counts
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return n, err
	}
	defer db.Close()
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return n, fmt.Errorf("%s: reading the schema version: %w", path, err)
	}
	if version < 1 || version > 4 {
		return n, fmt.Errorf("%s has schema version %d; this command reads versions 1 to 4", path, version)
	}
	s, err := store.Open(dir)
	if err != nil {
		return n, err
	}
	defer s.Close()
	dec, err := decoder(db)
	if err != nil {
		return n, err
	}
	defer dec.Close()
	if n, err = copyRuns(db, s, dec); err != nil {
		return n, err
	}
	var seq int64
	if err := db.QueryRow(`SELECT seq FROM sqlite_sequence WHERE name = 'runs'`).Scan(&seq); err == nil {
		if err := s.ReserveRunIDs(seq); err != nil {
			return n, err
		}
	}
	for v, copyTable := range []func(*sql.DB, *store.Store) error{2: copyAlerts, 3: copyStarted, 4: copyBaselines} {
		if copyTable != nil && version >= v {
			if err := copyTable(db, s); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// decoder decodes the samples with every dictionary they were written with.
func decoder(db *sql.DB) (*zstd.Decoder, error) {
	rows, err := db.Query(`SELECT id, content FROM dicts`)
	if err != nil {
		return nil, fmt.Errorf("reading the sample dictionaries: %w", err)
	}
	defer rows.Close()
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64 << 20)}
	for rows.Next() {
		var id int64
		var c []byte
		if err := rows.Scan(&id, &c); err != nil {
			return nil, err
		}
		opts = append(opts, zstd.WithDecoderDictRaw(uint32(id), c))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return zstd.NewReader(nil, opts...)
}

func copyRuns(db *sql.DB, s *store.Store, dec *zstd.Decoder) (counts, error) {
	var n counts
	rows, err := db.Query(`SELECT id, job, status, trigger, target, started_ns, ended_ns, verdict, requests, rss_per_request, error, report FROM runs ORDER BY id`)
	if err != nil {
		return n, fmt.Errorf("reading the runs: %w", err)
	}
	defer rows.Close()
	var runs []store.Run
	var reports [][]byte
	for rows.Next() {
		var r store.Run
		var started, ended, requests int64
		var report []byte
		if err := rows.Scan(&r.ID, &r.Job, &r.Status, &r.Trigger, &r.Target, &started, &ended, &r.Verdict, &requests, &r.RSSPerRequest, &r.Error, &report); err != nil {
			return n, fmt.Errorf("reading the runs: %w", err)
		}
		r.Started, r.Requests = timeNs(started), uint64(requests)
		if ended != 0 {
			r.Ended = timeNs(ended)
		}
		runs, reports = append(runs, r), append(reports, report)
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("reading the runs: %w", err)
	}
	for i, r := range runs {
		if err := s.ImportRun(r, reports[i]); err != nil {
			return n, err
		}
		k, err := copySamples(db, s, dec, r.ID)
		n.samples += k
		if err != nil {
			return n, err
		}
		n.runs++
	}
	return n, nil
}

func copySamples(db *sql.DB, s *store.Store, dec *zstd.Decoder, id int64) (int, error) {
	rows, err := db.Query(`SELECT data FROM samples WHERE run_id = ? ORDER BY id`, id)
	if err != nil {
		return 0, fmt.Errorf("run %d: reading its samples: %w", id, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return n, fmt.Errorf("run %d: reading its samples: %w", id, err)
		}
		if len(b) == 0 || b[0] != '{' {
			if b, err = dec.DecodeAll(b, nil); err != nil {
				return n, fmt.Errorf("run %d: sample %d: %w", id, n+1, err)
			}
		}
		var rec model.Record
		if err := rec.UnmarshalJSON(b); err != nil {
			return n, fmt.Errorf("run %d: sample %d: %w", id, n+1, err)
		}
		if err := s.AppendSample(id, rec); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func copyAlerts(db *sql.DB, s *store.Store) error {
	return eachRow(db, `SELECT data FROM alerts WHERE fingerprint != '~probe'`, func(sc func(...any) error) error {
		var b []byte
		var a alerts.StoredAlert
		if err := sc(&b); err != nil {
			return err
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return fmt.Errorf("an alert: %w", err)
		}
		return s.SaveAlert(a)
	})
}

func copyStarted(db *sql.DB, s *store.Store) error {
	return eachRow(db, `SELECT pid, start_ticks, job, run_id FROM started`, func(sc func(...any) error) error {
		var t store.StartedTarget
		var ticks int64
		if err := sc(&t.PID, &ticks, &t.Job, &t.RunID); err != nil {
			return err
		}
		t.StartTicks = uint64(ticks)
		return s.AddStarted(t)
	})
}

func copyBaselines(db *sql.DB, s *store.Store) error {
	err := eachRow(db, `SELECT job, run_id, pinned FROM baselines`, func(sc func(...any) error) error {
		var job string
		var id int64
		var pinned bool
		if err := sc(&job, &id, &pinned); err != nil {
			return err
		}
		return s.SetBaseline(job, id, pinned)
	})
	if err != nil {
		return err
	}
	return eachRow(db, `SELECT run_id, baseline_id, verdict, data FROM comparisons`, func(sc func(...any) error) error {
		var id, base int64
		var verdict string
		var data []byte
		if err := sc(&id, &base, &verdict, &data); err != nil {
			return err
		}
		return s.SaveComparison(id, base, verdict, data)
	})
}

// eachRow calls fn with the scanner of each row of query.
func eachRow(db *sql.DB, query string, fn func(scan func(...any) error) error) error {
	rows, err := db.Query(query)
	if err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return fmt.Errorf("%s: %w", query, err)
		}
	}
	return rows.Err()
}

func timeNs(ns int64) time.Time { return time.Unix(0, ns) }
