package daemon

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/store"
)

// execJobYAML is a config whose job "web" starts its target itself
// (target.exec) through a wrapper shell that starts the server and a
// `sleep` with & and waits for them, the sleep in a session of its own
// (out of the target's process group), and writes both PIDs to files in
// dir.
func execJobYAML(t *testing.T, dir string, port int) string {
	t.Helper()
	tgt := soaktest.Binary(t, soaktest.Target)
	sh := fmt.Sprintf("setsid sleep 600 & echo $! > %s/sleep.pid; %s --listen 127.0.0.1:%d --pid-file %s/target.pid --max-lifetime 10m & wait",
		dir, tgt, port, dir)
	return fmt.Sprintf(`listen: 127.0.0.1:0
state_dir: %s
log_level: debug
jobs:
  - name: web
    schedule: "@every 1h"
    max_duration: 5m
    target:
      exec: "sh -c '%s'"
      ready_timeout: 30s
    load:
      url: http://127.0.0.1:%d/
      rate: 50
      concurrency: 2
      duration: %s
      timeout: 5s
    sampling:
      interval: 200ms
      smaps_interval: 1s
    phases:
      warmup: "0"
`, filepath.Join(dir, "state"), sh, port, "3s")
}

// TestKill9StopsTheTarget kills (SIGKILL) a real `soakd serve` in the
// middle of a run whose target it started through a wrapper script that
// backgrounds the server (&) and waits: the server, the wrapper and a
// process the wrapper put in a session of its own all die with soakd (the
// exec watcher), the server's port is closed, and the restarted soakd's
// next run starts on the freed port.
func TestKill9StopsTheTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := freeLoopbackPort(t)
	cfgPath := filepath.Join(dir, "soakd.yaml")
	writeConfig(t, cfgPath, strings.Replace(execJobYAML(t, dir, port), "duration: 3s", "duration: 2m", 1))
	p := startSoakd(t, cfgPath)
	id := startRun(t, p.url, "web", "")
	waitFor(t, 60*time.Second, "5 stored samples", func() bool { return sampleCount(t, p.url, id) >= 5 })
	server, sleeper := readPID(t, dir, "target.pid"), readPID(t, dir, "sleep.pid")
	t.Cleanup(func() { _ = syscall.Kill(server, syscall.SIGKILL); _ = syscall.Kill(sleeper, syscall.SIGKILL) })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.wait(t, 30*time.Second)
	killed := time.Now()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitFor(t, 30*time.Second, "the server, the sleep in its own session and the server's port to be gone", func() bool {
		return !running(server) && !running(sleeper) && !listening(addr)
	})
	t.Logf("server, its port and the sleep gone %s after the kill", time.Since(killed).Round(time.Millisecond))

	writeConfig(t, cfgPath, execJobYAML(t, dir, port))
	p2 := startSoakd(t, cfgPath)
	id2 := startRun(t, p2.url, "web", "")
	var r runInfo
	waitFor(t, 90*time.Second, "the next run to end", func() bool {
		r = runStatus(t, p2.url, "web", id2)
		return r.Status != store.StatusRunning
	})
	if r.Status != store.StatusCompleted {
		t.Errorf("next run: status %q, error %q; want completed", r.Status, r.Error)
	}
	assertNoStarted(t, p2, filepath.Join(dir, "state"))
}

// listening says whether addr accepts a TCP connection.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// assertNoStarted stops p and checks that its store recorded no target
// left running.
func assertNoStarted(t *testing.T, p *soakdProc, state string) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.wait(t, 60*time.Second)
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := st.Started(); err != nil || len(got) != 0 {
		t.Errorf("started targets after the runs ended: %+v, %v; want none", got, err)
	}
}

// freeLoopbackPort returns a loopback port that was free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// readPID reads a PID file in dir.
func readPID(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("%s: %q: %v", name, b, err)
	}
	return pid
}

// running says whether pid is a process that has not exited (a zombie
// has).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
