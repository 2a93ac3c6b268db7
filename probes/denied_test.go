package probes

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const (
	deniedEnv    = "PROBES_DENIED_TARGET"
	deniedURLEnv = "PROBES_DENIED_URL"
)

// TestPermissionDenied runs this test binary as user nobody against this
// (root) process: fds and I/O of another user cannot be read, and each
// kind of trouble is logged once while the other metrics go on.
func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a helper as another user")
	}
	dir, err := os.MkdirTemp("", "probes-denied-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "probes.test")
	copyFile(t, os.Args[0], bin)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a listener nobody cannot trace to its owner
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestDeniedHelper$", "-test.v")
	cmd.Env = append(os.Environ(), deniedEnv+"="+strconv.Itoa(os.Getpid()), deniedURLEnv+"=http://"+ln.Addr().String()+"/")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestDeniedHelper") {
		t.Fatalf("helper as nobody: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDeniedHelper is the half of TestPermissionDenied that runs as nobody.
func TestDeniedHelper(t *testing.T) {
	pid, err := strconv.Atoi(os.Getenv(deniedEnv))
	if err != nil {
		t.Skip("only run by TestPermissionDenied")
	}
	core, logs := observer.New(zapcore.WarnLevel)
	log := zap.New(core)
	tg, err := Open(context.Background(), Spec{PID: pid}, log)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s := NewSampler(tg, SamplerOptions{Log: log, SocketInterval: time.Nanosecond, SmapsInterval: time.Nanosecond})
	for range 3 {
		got := s.Sample()
		if !got.Alive || got.RSS == 0 || got.Threads == 0 || got.IOValid || got.TCPValid || got.SmapsValid {
			t.Errorf("got alive %v rss %d threads %d io %v tcp %v smaps %v; want alive with rss and threads, no I/O, TCP or smaps",
				got.Alive, got.RSS, got.Threads, got.IOValid, got.TCPValid, got.SmapsValid)
		}
		checkMembersSum(t, got)
	}
	_, err = Open(context.Background(), Spec{URL: os.Getenv(deniedURLEnv)}, log)
	if want := "run soakd as the target's user or grant it CAP_SYS_PTRACE"; !strings.Contains(errText(err), want) {
		t.Errorf("port-owner lookup: err = %v; want it to contain %q", err, want)
	}
	for _, kind := range []string{"I/O counters", "smaps_rollup", "open files"} {
		n := logs.FilterMessageSnippet(kind).Len()
		if n != 1 {
			t.Errorf("%d warnings about %s; want 1", n, kind)
		}
		for _, e := range logs.FilterMessageSnippet(kind).All() {
			if !strings.Contains(e.Message, "CAP_SYS_PTRACE") {
				t.Errorf("warning %q does not name the fix", e.Message)
			}
		}
	}
}

// checkMembersSum checks that a sample's members add up to its RSS and to
// its fds, and that some member has NoFDs when the sample's fds are not
// valid.
func checkMembersSum(t *testing.T, s Sample) {
	t.Helper()
	var rss, fds uint64
	unread := 0
	for _, m := range s.Members {
		rss, fds = rss+m.RSS, fds+m.FDs
		if m.NoFDs {
			unread++
		}
	}
	if len(s.Members) != s.Procs || rss != s.RSS || (!s.FDsValid && unread == 0) || (s.FDsValid && fds != s.FDs) {
		t.Errorf("members %+v sum to rss %d fds %d with %d unread; want %d processes summing to the sample's rss %d, fds %d (valid %v)",
			s.Members, rss, fds, unread, s.Procs, s.RSS, s.FDs, s.FDsValid)
	}
}
