package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/soakd/soakd/alerts"
	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// oldSchema is soak/store's SQLite schema before the file store, version
// by version, as it was released.
var oldSchema = []string{
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

func record(i int) model.Record {
	return model.Record{Sample: probes.Sample{Time: time.Date(2026, 11, 30, 2, 0, i, 0, time.UTC), Alive: true, RSS: uint64(1000 + i), RSSValid: true},
		Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(10 * i)}
}

// oldStore writes an SQLite store as the older soakd did: run 3 with a
// report and plain JSON samples, run 5 with dictionary-compressed samples,
// a pruned run 7 (IDs up to 7 handed out), an alert, a started target, a
// pinned baseline and a comparison.
func oldStore(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, store.LegacyFileName)+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, m := range oldSchema {
		exec(m)
	}
	exec("PRAGMA user_version = 4")
	started := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC).UnixNano()
	dict := []byte(`{"time":"2026-11-30T02:00:00Z","alive":true,"rss":1000,"requests":0}`)
	exec(`INSERT INTO dicts(id, content) VALUES(1, ?)`, dict)
	for _, id := range []int64{3, 5, 7} {
		exec(`INSERT INTO runs(id, job, status, trigger, target, started_ns, ended_ns, verdict, requests, rss_per_request, error, report) VALUES(?, 'web', 'completed', 'api', 'pid 42', ?, ?, 'leak', 1234, 48.5, 'x', ?)`,
			id, started, started+int64(time.Hour), []byte(`{"verdict":"leak"}`))
	}
	exec(`DELETE FROM runs WHERE id = 7`)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(1, dict))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for i := range 4 {
		b, _ := json.Marshal(record(i))
		exec(`INSERT INTO samples(run_id, data) VALUES(3, ?)`, b)
		exec(`INSERT INTO samples(run_id, data) VALUES(5, ?)`, enc.EncodeAll(b, nil))
	}
	a := alerts.StoredAlert{Alert: alerts.Alert{Labels: map[string]string{alerts.LabelAlertname: "SoakdLeak", alerts.LabelJob: "web"}}, Gen: 3}
	ab, _ := json.Marshal(a)
	exec(`INSERT INTO alerts(fingerprint, data) VALUES(?, ?)`, a.Alert.Fingerprint().String(), ab)
	exec(`INSERT INTO started(pid, start_ticks, job, run_id) VALUES(4242, 987654, 'web', 5)`)
	exec(`INSERT INTO baselines(job, run_id, pinned) VALUES('web', 3, 1)`)
	exec(`INSERT INTO comparisons(run_id, baseline_id, verdict, data) VALUES(5, 3, 'same', ?)`, []byte(`{"verdict": "same"}`))
}

func TestMigrate(t *testing.T) {
	dir := t.TempDir()
	oldStore(t, dir)
	if _, err := store.Open(dir); err == nil {
		t.Fatal("store.Open beside the SQLite store: no error")
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--state-dir", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), "migrated 2 runs, 8 samples") {
		t.Errorf("output %q; want it to say 2 runs, 8 samples", &stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, store.LegacyFileName+".migrated")); err != nil {
		t.Errorf("the old file was not renamed: %v", err)
	}
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs("", 0)
	if err != nil || len(runs) != 2 || runs[0].ID != 5 || runs[1].ID != 3 {
		t.Fatalf("runs %+v, %v; want 5 and 3", runs, err)
	}
	if r := runs[1]; r.Job != "web" || r.Status != "completed" || r.Trigger != "api" || r.Target != "pid 42" || r.Verdict != "leak" ||
		r.Requests != 1234 || r.RSSPerRequest != 48.5 || r.Error != "x" || r.Ended.Sub(r.Started) != time.Hour {
		t.Errorf("run 3 = %+v; want every field as stored", r)
	}
	if b, err := s.ReportJSON(3); err != nil || string(b) != `{"verdict":"leak"}` {
		t.Errorf("report of run 3 = %s, %v", b, err)
	}
	for _, id := range []int64{3, 5} {
		recs, err := s.Samples(id)
		if err != nil || len(recs) != 4 {
			t.Fatalf("run %d: %d samples, %v; want 4", id, len(recs), err)
		}
		for i, r := range recs {
			if want := record(i); !r.Time.Equal(want.Time) || r.RSS != want.RSS || r.Requests != want.Requests {
				t.Errorf("run %d sample %d = %+v; want %+v", id, i, r, want)
			}
		}
	}
	if as, err := s.Alerts(); err != nil || len(as) != 1 || as[0].Gen != 3 {
		t.Errorf("alerts %+v, %v; want the one stored", as, err)
	}
	if ts, err := s.Started(); err != nil || !reflect.DeepEqual(ts, []store.StartedTarget{{PID: 4242, StartTicks: 987654, Job: "web", RunID: 5}}) {
		t.Errorf("started %+v, %v", ts, err)
	}
	if b, err := s.JobBaseline("web"); err != nil || b.RunID != 3 || !b.Pinned {
		t.Errorf("baseline %+v, %v; want run 3 pinned", b, err)
	}
	if base, data, err := s.Comparison(5); err != nil || base != 3 || string(data) != `{"verdict": "same"}` {
		t.Errorf("comparison of run 5: %d %s %v", base, data, err)
	}
	if id, err := s.CreateRun("web", store.TriggerAPI, "", time.Now()); err != nil || id != 8 {
		t.Errorf("a new run's ID %d, %v; want 8 (IDs up to 7 were handed out)", id, err)
	}
}

func TestMigrateRefuses(t *testing.T) {
	empty := t.TempDir()
	both := t.TempDir()
	oldStore(t, both)
	if err := os.Mkdir(filepath.Join(both, store.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, dir, want string
	}{
		{"nothing to migrate", empty, "no SQLite store to migrate"},
		{"store exists", both, "exists already"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"--state-dir", tt.dir}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit code %d, %q; want 1 and %q", code, &stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(both, store.LegacyFileName)); err != nil {
		t.Errorf("the refused migration moved the SQLite file: %v", err)
	}
}
