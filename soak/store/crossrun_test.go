package store

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/soakd/soakd/soak/verdict"
)

// TestCrossRunSurvivesReopen: the saved cross-run evidence comes back
// whole after the store is closed and opened again; a save replaces it.
func TestCrossRunSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.CrossRun(); err != nil || len(got) != 0 {
		t.Fatalf("a new store's evidence: %v, %v; want none, no error", got, err)
	}
	want := CrossRun{"web": {PID: 4242, Start: 99_000_123, Resources: map[string]verdict.Earlier{
		"rss": {Level: 53_370_000, LeakRun: 7, Process: "pid 4242", Runs: 2, Points: []verdict.Point{
			{Value: 53_000_000, Phase: verdict.Baseline},
			{Requests: 0, Seconds: 0, Value: 53_370_000, Phase: verdict.Soak},
			{Requests: 1500.5, Seconds: 15.25, Value: 53_400_000, Phase: verdict.Soak},
		}},
		"fds": {Level: 11, Process: "pid 4242", Runs: 2},
	}}}
	if err := s.SaveCrossRun(CrossRun{"old": {PID: 1, Start: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCrossRun(want); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.CrossRun()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v;\nwant %+v", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, CrossRunFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", CrossRunFile, fi.Mode(), err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, CrossRunFile+".tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestCrossRunCorrupt: a corrupt file, or one of another format version,
// gives an error naming the file and no evidence, not a crash.
func TestCrossRunCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"truncated", `{"version":1,"jobs":{"web":{"pid":`, "is corrupt"},
		{"garbage", "\x00\x01zz", "is corrupt"},
		{"newer version", `{"version":9,"jobs":{}}`, "format version 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := os.WriteFile(filepath.Join(dir, CrossRunFile), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := s.CrossRun()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), CrossRunFile) {
				t.Errorf("error %v; want one naming %s and saying %q", err, CrossRunFile, tc.want)
			}
			if len(got) != 0 {
				t.Errorf("evidence %+v; want none", got)
			}
		})
	}
}
