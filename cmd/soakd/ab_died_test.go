package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/soakd/soakd/internal/soaktest"
)

// TestABBuildDiesMidRun: build B serves for 4 s, then its command writes
// a fatal line to stderr and exits 7. soakd ab stops with exit 3 and
// prints, on stderr and in the JSON's "died", the build, its exit and its
// last output lines, as it does for a build that fails to start.
func TestABBuildDiesMidRun(t *testing.T) {
	bin := soaktest.Binary(t, soaktest.Target)
	a := bin + " --listen 127.0.0.1:{port} --max-lifetime 2m"
	b := fmt.Sprintf(`sh -c '%s --listen 127.0.0.1:$0 --max-lifetime 4s; echo "fatal error: out of sockets" >&2; exit 7' {port}`, bin)
	var out, errb bytes.Buffer
	code := run([]string{"ab", "--a", a, "--b", b, "-n", "2000000", "-d", "90s", "--json", "-q"}, &out, &errb)
	if code != exitTargetDied {
		t.Fatalf("exit %d; want %d (a build died)\nstderr: %s", code, exitTargetDied, errb.String())
	}
	t.Logf("stderr:\n%s", errb.String())
	var res struct {
		StoppedBy string `json:"stopped_by"`
		Died      *struct {
			Build    string   `json:"build"`
			Requests uint64   `json:"requests"`
			Exit     string   `json:"exit"`
			Output   []string `json:"output"`
		} `json:"died"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("the JSON: %v\n%s", err, out.String())
	}
	d := res.Died
	if res.StoppedBy != "b_died" || d == nil || d.Build != "B" || d.Exit != "code 7" || d.Requests == 0 ||
		len(d.Output) == 0 || d.Output[len(d.Output)-1] != "fatal error: out of sockets" {
		t.Errorf("stopped by %s, died %+v; want b_died, build B, exit code 7, its requests and its last line", res.StoppedBy, d)
	}
	want := "soakd ab: build B died mid-run after "
	if s := errb.String(); !strings.Contains(s, want) || !strings.Contains(s, "(exit code 7); its last output lines (stdout and stderr):\n") ||
		!strings.Contains(s, "\n    fatal error: out of sockets\n") {
		t.Errorf("stderr %q; want %q with the exit and the last output lines", s, want)
	}
}
