package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/probes"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/store"
	"github.com/soakd/soakd/soak/verdict"
)

// exportState makes a state directory with a finished run of 3 samples
// and a running run of 1; it returns the directory and the two run IDs.
func exportState(t *testing.T) (dir string, done, running int64) {
	t.Helper()
	dir = t.TempDir()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	done, _ = s.CreateRun("web", store.TriggerSchedule, "pid 42", start)
	var recs []model.Record
	for i := range 3 {
		r := model.Record{Sample: probes.Sample{Time: start.Add(time.Duration(i) * time.Second), Alive: true, RSSValid: true, RSS: uint64(1000 * (i + 1))},
			Elapsed: float64(i), Phase: verdict.Soak, Requests: uint64(100 * i)}
		recs = append(recs, r)
		if err := s.AppendSample(done, r); err != nil {
			t.Fatal(err)
		}
	}
	rep := &model.Report{Verdict: "clean", Started: start, Ended: start.Add(2 * time.Second), Records: recs}
	if err := s.FinishRun(done, store.StatusCompleted, rep, nil); err != nil {
		t.Fatal(err)
	}
	running, _ = s.CreateRun("web", store.TriggerAPI, "", start)
	s.AppendSample(running, recs[0])
	return dir, done, running
}

func TestExportCSV(t *testing.T) {
	dir, done, _ := exportState(t)
	var stdout, stderr bytes.Buffer
	if code := cmdExport([]string{strconv.FormatInt(done, 10), "--csv", "--state-dir", dir}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code %d; want 0 (stderr %q)", code, stderr.String())
	}
	recs, err := model.ReadCSV(&stdout)
	if err != nil {
		t.Fatalf("ReadCSV of the export: %v", err)
	}
	if len(recs) != 3 || recs[2].RSS != 3000 || recs[2].Requests != 200 {
		t.Errorf("exported %d records, last %+v; want 3, RSS 3000, 200 requests", len(recs), recs[len(recs)-1])
	}
}

func TestExportJSONToFile(t *testing.T) {
	dir, done, _ := exportState(t)
	out := filepath.Join(t.TempDir(), "report.json")
	var stdout, stderr bytes.Buffer
	if code := cmdExport([]string{"--json", "--state-dir", dir, "-o", out, strconv.FormatInt(done, 10)}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code %d; want 0 (stderr %q)", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q; want nothing with -o", stdout.String())
	}
	b, _ := os.ReadFile(out)
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil || rep["verdict"] != "clean" {
		t.Errorf("report file %s (err %v); want the stored report with verdict clean", b, err)
	}
}

func TestExportConfigStateDir(t *testing.T) {
	dir, done, _ := exportState(t)
	cfg := filepath.Join(t.TempDir(), "soakd.yaml")
	os.WriteFile(cfg, []byte("state_dir: "+dir+"\n"), 0o600)
	var stdout, stderr bytes.Buffer
	if code := cmdExport([]string{strconv.FormatInt(done, 10), "--config", cfg}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code %d; want 0 (stderr %q)", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "time,elapsed_seconds,") {
		t.Errorf("stdout starts %q; want the CSV header", stdout.String()[:min(40, stdout.Len())])
	}
}

func TestExportErrors(t *testing.T) {
	dir, _, running := exportState(t)
	empty := t.TempDir()
	legacy := t.TempDir()
	if err := os.WriteFile(filepath.Join(legacy, store.LegacyFileName), []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no run id", []string{"--state-dir", dir}, "want one RUN_ID"},
		{"bad run id", []string{"x1", "--state-dir", dir}, `RUN_ID "x1"`},
		{"both formats", []string{"1", "--csv", "--json", "--state-dir", dir}, "not both"},
		{"missing run", []string{"999", "--state-dir", dir}, "run 999: not found"},
		{"no report yet", []string{strconv.FormatInt(running, 10), "--json", "--state-dir", dir}, "has no report yet (status running)"},
		{"no database", []string{"1", "--state-dir", empty}, "no run store at " + filepath.Join(empty, store.FileName)},
		{"sqlite store", []string{"1", "--state-dir", legacy}, filepath.Join(legacy, store.LegacyFileName) + " is the SQLite run store of an older soakd"},
		{"unknown flag", []string{"1", "--tsv"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cmdExport(tt.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit code %d; want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q; want it to contain %q", stderr.String(), tt.want)
			}
		})
	}
}
