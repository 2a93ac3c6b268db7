package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExecSink(t *testing.T) {
	out := filepath.Join(t.TempDir(), "payload.json")
	cases := []struct {
		name      string
		argv      []string
		timeout   time.Duration
		wantErr   string // substring; "" means success
		wantRetry bool
	}{
		{"payload on stdin", []string{"/bin/sh", "-c", `cat > "$1"`, "sh", out}, 0, "", false},
		{"non-zero exit", []string{"/bin/sh", "-c", "echo boom >&2; exit 3"}, 0, "boom", false},
		{"tempfail asks for retry", []string{"/bin/sh", "-c", "exit 75"}, 0, "exit status 75", true},
		{"timeout kills the group", []string{"/bin/sh", "-c", "sleep 600; true"}, 200 * time.Millisecond, "deadline exceeded", true},
		{"missing binary", []string{"/nonexistent/page"}, 0, "no such file", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewExec("run-script", c.argv, c.timeout)
			if err != nil {
				t.Fatal(err)
			}
			retry, err := e.Send(context.Background(), LeakAlert(testLeak("web", "fds")))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Send: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Send: got %v; want an error containing %q", err, c.wantErr)
			}
			if retry != c.wantRetry {
				t.Errorf("retryable: got %v; want %v", retry, c.wantRetry)
			}
		})
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("stdin is not a Payload: %v", err)
	}
	if got := p.Alerts[0].Fingerprint; got != "SoakdLeak/web/fds" {
		t.Errorf("fingerprint: got %q; want SoakdLeak/web/fds", got)
	}
}

func TestExecTimeoutIsDeadline(t *testing.T) {
	e, _ := NewExec("x", []string{"/bin/sleep", "600"}, 100*time.Millisecond)
	_, err := e.Send(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v; want DeadlineExceeded", err)
	}
}
