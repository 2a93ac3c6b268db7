package runner_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soakd/soakd/internal/soaktest"
	"github.com/soakd/soakd/soak/load"
	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/verdict"
)

// TestEndToEndBusyMachineNoFalseCPULeak soaks clean servers (Python's
// http.server, a static Node server, nginx) while shell loops keep every
// core busy, and more loops start halfway, so that the contention rises
// over the soak. No CPU leak may be called, and the verdict line must
// agree with every line under it. (A real CPU leak under these loops
// gets a twentieth of a core: too few requests in 14 s to show; it is
// found on its own in TestEndToEndCPUCostPerRequestRising.)
func TestEndToEndBusyMachineNoFalseCPULeak(t *testing.T) {
	if testing.Short() {
		t.Skip("a busy-machine soak of about 80 s")
	}
	servers := []struct {
		name  string
		start func(t *testing.T) (string, int)
	}{
		{"python3 http.server", startPython},
		{"node", startNode},
		{"nginx", startNginx},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			url, pid := s.start(t)
			busyLoops(t, runtime.NumCPU(), busyNice)
			rep := soakBusy(t, url, pid)
			d := rep.CPU.Cost
			t.Logf("cost windows %d, %+.0f %% (%+.0f %% beyond the contention: other work %.2f to %.2f cores, run-queue wait %.2f to %.2f s per CPU second), p = %.2g, rising %v, inconclusive %v",
				d.Windows, 100*d.Change, 100*d.AdjustedChange, d.ContentionStart, d.ContentionEnd, d.WaitStart, d.WaitEnd, d.PValue, d.Rising, d.Inconclusive)
			if d.Rising {
				t.Errorf("a clean %s on a busy machine: CPU cost called rising: %s", s.name, d.Reason)
			}
			wantVerdictAgrees(t, rep)
		})
	}
}

// busyNice is the busy loops' nice. At −5 they leave a clean server a
// twentieth of a core: a dozen seconds then hold too few cost windows for
// any rise to be judged, and the test could not fail.
const busyNice = 0

// soakBusy soaks the target for 14 s with two workers, and starts one
// more busy loop per core 6 s in.
func soakBusy(t *testing.T, url string, pid int) *model.Report {
	t.Helper()
	more := time.AfterFunc(6*time.Second, func() { busyLoops(t, runtime.NumCPU(), busyNice) })
	t.Cleanup(func() { more.Stop() })
	return soakCPU(t, url, pid, load.Options{Concurrency: 2, Duration: 14 * time.Second})
}

// wantVerdictAgrees checks that the verdict line agrees with every line
// under it: a leak (of a resource, or the CPU cost per request) is the
// run's verdict "leak", and the text says "a CPU leak" only then.
func wantVerdictAgrees(t *testing.T, rep *model.Report) {
	t.Helper()
	if rep.Failing() {
		return // failing ranks over leak: its leaks are named on its line
	}
	leaks := rep.Leaks()
	if (rep.Verdict == verdict.OverallLeak) != (len(leaks) > 0) {
		t.Errorf("verdict %s, leaks %v; want leak exactly when something leaks", rep.Verdict, leaks)
	}
	var b strings.Builder
	rep.WriteText(&b)
	if strings.Contains(b.String(), "a CPU leak") && rep.Verdict != verdict.OverallLeak {
		t.Errorf("the report says \"a CPU leak\" under %q", rep.VerdictLine())
	}
}

// busyLoops starts n shell loops that spin at the given nice (raised
// only when soakd may: as root), each in a process group of its own,
// killed and reaped when the test ends.
func busyLoops(t *testing.T, n, nice int) {
	t.Helper()
	if err := startLoops(t, n, nice, 0); err != nil {
		t.Fatal(err)
	}
}

// startLoops starts n busy loops at nice (set when it lowers their
// priority, or as root), each ended after d by timeout(1) when d > 0; what
// is left is killed and reaped when the test ends. It does not stop the
// test, so a timer's goroutine may call it too.
func startLoops(t *testing.T, n, nice int, d time.Duration) error {
	args := []string{"sh", "-c", "while :; do :; done"}
	if d > 0 {
		args = append([]string{"timeout", fmt.Sprint(d.Seconds())}, args...)
	}
	if nice > 0 || os.Geteuid() == 0 {
		args = append([]string{"nice", "-n", fmt.Sprint(nice)}, args...)
	}
	for range n {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting a busy loop: %v", err)
		}
		killGroup(t, cmd.Process.Pid)
		soaktest.Reap(t, cmd)
	}
	return nil
}

// killGroup kills what is left of the process group pid leads when the
// test ends, after the leader has been reaped (cleanups run last first).
func killGroup(t *testing.T, pid int) {
	t.Cleanup(func() {
		if err := syscall.Kill(-pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCommand starts a server that listens on 127.0.0.1:port in a
// process group of its own, waits until the port answers, and returns its
// URL and PID; it is stopped and reaped when the test ends.
func startCommand(t *testing.T, port int, name string, args ...string) (string, int) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	cmd := exec.Command(name, args...)
	var out soaktest.LockedBuilder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	killGroup(t, cmd.Process.Pid)
	exited := soaktest.Reap(t, cmd)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	soaktest.WaitFor(t, 30*time.Second, name+" listening on "+addr, func() bool {
		select {
		case <-exited:
			t.Fatalf("%s exited: %v\n%s", name, cmd.ProcessState, out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/", cmd.Process.Pid
}

// staticDir is a directory holding a 512-byte index.html.
func staticDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(strings.Repeat("x", 511)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startPython(t *testing.T) (string, int) {
	port := freePort(t)
	return startCommand(t, port, "python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory", staticDir(t), fmt.Sprint(port))
}

func startNode(t *testing.T) (string, int) {
	port := freePort(t)
	js := fmt.Sprintf(`const body = "x".repeat(511) + "\n";
require("http").createServer((req, res) => {
  res.writeHead(200, {"content-type": "text/html", "content-length": body.length});
  res.end(body);
}).listen(%d, "127.0.0.1");`, port)
	return startCommand(t, port, "node", "-e", js)
}

// startNginx runs nginx in the foreground with a config of its own in a
// temporary directory: one worker, no access log, a static file.
func startNginx(t *testing.T) (string, int) {
	return startNginxWith(t, "root "+staticDir(t)+";")
}

// startNginxWith runs nginx (a master and one worker, in the foreground)
// with a config of its own in a temporary directory, its one server's
// body being server (e.g. "root DIR;" or "location / { proxy_pass …; }"),
// and returns its URL and the master's PID.
func startNginxWith(t *testing.T, server string) (string, int) {
	port, dir := freePort(t), t.TempDir()
	conf := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
%[4]s
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d;
    %[3]s
  }
}
`, dir, port, server, nginxUser())
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := "nginx"
	if _, err := exec.LookPath(bin); err != nil {
		bin = "/usr/sbin/nginx"
	}
	return startCommand(t, port, bin, "-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"))
}

// nginxUser keeps nginx's worker as root when the test runs as root: the
// static file sits in a directory only its owner may read.
func nginxUser() string {
	if os.Geteuid() == 0 {
		return "user root;"
	}
	return ""
}
