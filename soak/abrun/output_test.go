package abrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// failing is a build that writes 30 lines to stderr, one to stdout, and
// exits 3 before it listens.
const failing = `sh -c 'for i in $(seq 1 30); do echo "compile line $i" >&2; done; echo "fatal: cannot bind"; exit 3' {port}`

// TestFailedBuildShowsOutput: a build that fails to start shows its last
// 20 output lines in the error, with or without a log file of the user's
// (from the log, only what this start wrote).
func TestFailedBuildShowsOutput(t *testing.T) {
	userLog := filepath.Join(t.TempDir(), "a.log")
	if err := os.WriteFile(userLog, []byte("an earlier run's line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, log := range map[string]string{"no log": "", "user log": userLog} {
		t.Run(name, func(t *testing.T) {
			_, err := open(t.Context(), 0, Target{Exec: failing, ExecLog: log}, []string{"/"}, 30*time.Second, zaptest.NewLogger(t))
			if err == nil {
				t.Fatal("open: no error; want the start to fail")
			}
			msg := err.Error()
			_, tail, ok := strings.Cut(msg, "its last output lines (stdout and stderr):\n")
			if !ok {
				t.Fatalf("error %q; want the last output lines", msg)
			}
			lines := strings.Split(tail, "\n")
			if len(lines) != tailLines || lines[0] != "    compile line 12" || lines[18] != "    compile line 30" || lines[19] != "    fatal: cannot bind" {
				t.Errorf("%d lines %q; want the last 20: compile lines 12 to 30, then the fatal one", len(lines), lines)
			}
			if !strings.HasPrefix(msg, "a: ") || !strings.Contains(msg, "exited (code 3") {
				t.Errorf("error %q; want it to name build a and its exit", msg)
			}
		})
	}
}

// TestOutputRing keeps the last tailLines lines, each capped at lineCap.
func TestOutputRing(t *testing.T) {
	var o output
	o.add([]byte(strings.Repeat("x", 2*lineCap) + "\n"))
	for i := 0; i < 3*tailLines; i++ {
		o.add([]byte("a line\nand a part"))
		o.add([]byte(" ended\n"))
	}
	if len(o.lines) != tailLines || o.lines[len(o.lines)-1] != "and a part ended" || len(o.part) != 0 {
		t.Errorf("lines %q, part %q; want %d lines, the last whole", o.lines, o.part, tailLines)
	}
	var long output
	long.add([]byte(strings.Repeat("y", 3*lineCap) + "\n"))
	if len(long.lines) != 1 || len(long.lines[0]) != lineCap {
		t.Errorf("a long line kept %d bytes; want %d", len(long.lines[0]), lineCap)
	}
}

// TestDeathText: a death names the build, its requests and its exit, and
// shows its last output lines as a failed start does.
func TestDeathText(t *testing.T) {
	for _, c := range []struct {
		d    Death
		want string
	}{
		{Death{Build: "B", Requests: 12000, Exit: "code 2", Output: []string{"panic: x", "goroutine 1"}},
			"build B died mid-run after 12000 of its requests (exit code 2); its last output lines (stdout and stderr):\n    panic: x\n    goroutine 1"},
		{Death{Build: "A", Requests: 5, Exit: "signal killed"},
			"build A died mid-run after 5 of its requests (exit signal killed); it wrote nothing to stdout or stderr"},
		{Death{Build: "A", Requests: 5}, "build A died mid-run after 5 of its requests"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("got %q; want %q", got, c.want)
		}
	}
}
