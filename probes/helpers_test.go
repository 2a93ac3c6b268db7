package probes

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"go.uber.org/zap/zaptest"
)

func TestMain(m *testing.M) {
	if os.Getenv(parentEnv) != "" {
		os.Exit(execParent()) // the soakd stand-in of TestExecDiesWithSoakd
	}
	if os.Getenv(deniedEnv) != "" {
		os.Exit(m.Run()) // the unprivileged helper of TestPermissionDenied
	}
	os.Exit(soaktest.Main(m))
}

// waitFor waits up to 30 s for cond (soaktest.WaitFor).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	soaktest.WaitFor(t, 30*time.Second, what, cond)
}

// server is a running helper target.
type server struct {
	cmd    *exec.Cmd
	pid    int
	addr   string
	client *http.Client
	done   chan struct{} // closed once reaped
}

// startServer runs the helper target listening on listen (e.g.
// "127.0.0.1:0"), with extra flags, and stops it in t.Cleanup.
func startServer(t testing.TB, listen string, extra ...string) *server {
	t.Helper()
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	args := append([]string{"--listen", listen, "--port-file", portFile, "--max-lifetime", "10m"}, extra...)
	cmd := exec.Command(soaktest.Binary(t, soaktest.Target), args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start target: %v", err)
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{}),
		// One kept-alive connection, so the control requests do not change
		// the target's fd count between two samples.
		client: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second}}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	waitFor(t, "the target's port file", func() bool {
		b, err := os.ReadFile(portFile)
		s.addr = strings.TrimSpace(string(b))
		return err == nil && s.addr != ""
	})
	return s
}

// stop sends SIGTERM to the server's PID, then SIGKILL after 10s, and waits
// until it is reaped.
func (s *server) stop() {
	s.client.CloseIdleConnections()
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// post calls a control endpoint and checks it answered "ok".
func (s *server) post(t testing.TB, path string) {
	t.Helper()
	resp, err := s.client.Post("http://"+s.addr+path, "text/plain", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("POST %s: got %d %q; want 200 \"ok\"", path, resp.StatusCode, body)
	}
}

// openLive opens spec against the real /proc and fails the test on error.
func openLive(t testing.TB, spec Spec) *Target {
	t.Helper()
	tg, err := Open(context.Background(), spec, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%+v): %v", spec, err)
	}
	t.Cleanup(func() { _ = tg.Close(context.Background()) })
	return tg
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// processExists says whether pid is still a process (zombies included).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
