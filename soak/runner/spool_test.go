package runner_test

import (
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/runner"
)

// TestRunWithoutOutDirSpoolsToATemporaryDirectory: without --out, a run
// keeps its series in temporary files, analyses them as read back (the
// same records, members included, that it took), and removes them.
func TestRunWithoutOutDirSpoolsToATemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	url, pid := startTarget(t, "--leak-bytes", "0")
	var taken []model.Record
	rep := soakTuned(t, url, pid, load.Options{Rate: 200, Concurrency: 2, Duration: 2 * time.Second}, func(o *runner.Options) {
		o.OutDir, o.Baseline = "", 500*time.Millisecond
		o.OnRecord = func(r model.Record) { taken = append(taken, r) }
	})
	if len(taken) < 5 || len(rep.Records) != len(taken) || rep.Samples != len(taken) {
		t.Fatalf("took %d samples; the report read back %d and counts %d", len(taken), len(rep.Records), rep.Samples)
	}
	for i, want := range taken {
		got := rep.Records[i]
		if got.Elapsed != want.Elapsed || got.Phase != want.Phase || got.Requests != want.Requests || got.Rate != want.Rate ||
			got.RSS != want.RSS || got.FDs != want.FDs || got.CPUUser != want.CPUUser || !got.Time.Equal(want.Time) {
			t.Fatalf("record %d read back as %+v; want %+v", i, got, want)
		}
		if len(want.Members) == 0 || !reflect.DeepEqual(got.Members, want.Members) {
			t.Fatalf("record %d: members read back as %+v; want %+v", i, got.Members, want.Members)
		}
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
}
