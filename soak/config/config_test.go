package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/soakd/soakd/soak/runner"
	"github.com/soakd/soakd/soak/verdict"
)

var update = flag.Bool("update", false, "rewrite the '# want:' line of testdata/bad/*.yaml with the errors produced")

const wantPrefix = "# want: "

// TestBadConfigs parses each testdata/bad/*.yaml, named by its base name,
// and compares the error with the file's first line, "# want: ERROR".
// Several errors are joined with " | ".
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("%d bad configs; want at least 30", len(files))
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, rest, _ := bytes.Cut(data, []byte("\n"))
			want, ok := strings.CutPrefix(string(first), wantPrefix)
			if !ok {
				t.Fatalf("first line %q does not start with %q", first, wantPrefix)
			}
			_, perr := Parse(name, data)
			if perr == nil {
				t.Fatalf("Parse: no error; want %q", want)
			}
			got := strings.ReplaceAll(perr.Error(), "\n", " | ")
			if *update {
				out := append([]byte(wantPrefix+got+"\n"), rest...)
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("error\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

func TestExampleLoads(t *testing.T) {
	c, err := Load("../../configs/soakd.yaml")
	if err != nil {
		t.Fatalf("Load(configs/soakd.yaml): %v", err)
	}
	if len(c.Jobs) < 2 {
		t.Fatalf("got %d jobs; want the example's 2", len(c.Jobs))
	}
	for _, j := range c.Jobs {
		if _, err := j.Options(); err != nil {
			t.Errorf("job %s: Options: %v", j.Name, err)
		}
		if _, err := j.CronSchedule(); err != nil {
			t.Errorf("job %s: CronSchedule: %v", j.Name, err)
		}
	}
}

// TestExampleHasEveryField checks that configs/soakd.yaml shows every
// field of the structs, at the right place.
func TestExampleHasEveryField(t *testing.T) {
	data, err := os.ReadFile("../../configs/soakd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(newErrorList("soakd.yaml"))
	w.check(doc, reflect.TypeOf(Config{}), "")
	shown := map[string]bool{}
	for p := range w.errs.lines {
		shown[indexRE.ReplaceAllString(p, "[]")] = true
	}
	for _, path := range fieldPaths(reflect.TypeOf(Config{}), "") {
		if !shown[path] {
			t.Errorf("configs/soakd.yaml does not show %s", path)
		}
	}
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// fieldPaths lists the yaml paths of every field of t, with [] for the
// elements of a list of structs.
func fieldPaths(t reflect.Type, prefix string) []string {
	var paths []string
	names, fields := yamlFields(t)
	for _, n := range names {
		p := joinPath(prefix, n)
		paths = append(paths, p)
		ft := fields[n].Type
		switch {
		case ft.Kind() == reflect.Struct && ft != durationType:
			paths = append(paths, fieldPaths(ft, p)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			paths = append(paths, fieldPaths(ft.Elem(), p+"[]")...)
		}
	}
	return paths
}

func TestDefaultsMatchRun(t *testing.T) {
	c, err := Parse("soakd.yaml", []byte("jobs:\n  - name: web\n    schedule: '@daily'\n    load: {url: 'http://127.0.0.1:8080/', duration: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.StateDir != DefaultStateDir || c.LogLevel != "info" ||
		c.Retention != (Retention{MaxAge: DefaultMaxAge, MaxRunsPerJob: DefaultMaxRunsPerJob}) {
		t.Errorf("top-level defaults = %+v", c)
	}
	if c.ExternalURL != "http://"+DefaultListen || c.Alerts.ExternalURL != c.ExternalURL {
		t.Errorf("external_url = %q, alerts.external_url = %q; want http://%s for both", c.ExternalURL, c.Alerts.ExternalURL, DefaultListen)
	}
	j := c.Jobs[0]
	if want := runner.DefaultBaseline + time.Hour + 10*time.Second + DefaultSchedulingSlack; j.MaxDuration != want {
		t.Errorf("max_duration = %s; want %s", j.MaxDuration, want)
	}
	o, err := j.Options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Load.Concurrency != 0 || !o.Load.KeepAlive || o.Load.Timeout != 30*time.Second || o.Load.Endpoints[0].Method != "GET" ||
		o.Interval != 0 || o.Baseline != runner.DefaultBaseline || o.Sampler.SmapsInterval != 0 || o.Warmup.Fraction != 0.10 ||
		o.Memory.Alpha != 0.001 || o.Memory.MinPerRequest != 16 || o.Memory.MinTotal != 1<<20 || o.FDs.MinPerRequest != 0.001 ||
		o.Target.ReadyTimeout != 10*time.Second || o.Target.StopGrace != 5*time.Second || o.Target.URL != "http://127.0.0.1:8080/" {
		t.Errorf("default options differ from soakd run's: %+v", o)
	}
	if o.Memory != verdict.MemoryThresholds || o.FDs != verdict.FDThresholds {
		t.Errorf("default thresholds: memory %+v, fds %+v; want the verdict package's %+v, %+v", o.Memory, o.FDs, verdict.MemoryThresholds, verdict.FDThresholds)
	}
}
