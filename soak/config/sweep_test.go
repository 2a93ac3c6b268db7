package config

import (
	"strings"
	"testing"
	"time"
)

// TestSweepJob parses a job of kind sweep, with its defaults, and the
// errors of a bad ladder.
func TestSweepJob(t *testing.T) {
	good := `
jobs:
  - name: nightly-sweep
    schedule: "@daily"
    kind: sweep
    load: {url: "http://127.0.0.1:8080/"}
    target: {pid: 1}
    sweep: {levels: [1, 10, 100], level_duration: 20s}
`
	cfg, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	j := cfg.Jobs[0]
	if !j.IsSweep() || j.MaxDuration < 3*20*time.Second {
		t.Errorf("job = kind %q, max_duration %s; want a sweep capped above its 3 levels", j.Kind, j.MaxDuration)
	}
	o, err := j.SweepOptions()
	if err != nil || len(o.Levels) != 3 || o.LevelDuration != 20*time.Second || o.Run.Load.Endpoints[0].URL != "http://127.0.0.1:8080/" {
		t.Errorf("SweepOptions = %+v, %v; want the ladder and the URL", o, err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"kind: sweeps", `jobs[0].kind: "sweeps": want soak (the default) or sweep`},
		{"kind: sweep\n    sweep: {levels: [10, 5]}", "jobs[0].sweep.levels[1]: want rising concurrencies >= 1"},
		{"kind: sweep\n    sweep: {level_duration: -1s}", "jobs[0].sweep.level_duration: must be > 0"},
	} {
		doc := "jobs:\n  - name: s\n    schedule: \"@daily\"\n    load: {url: \"http://127.0.0.1:8080/\"}\n    " + c.yaml + "\n"
		if _, err := Parse("bad.yaml", []byte(doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", c.yaml, err, c.want)
		}
	}
}
