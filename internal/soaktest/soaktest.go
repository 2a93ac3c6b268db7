// Package soaktest holds what soakd's tests share: building the test
// servers once per test binary, starting one on a loopback port from :0
// and reaping it when the test ends, and waiting for a condition with a
// deadline instead of sleeping.
package soaktest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test programs of the repository, by import path.
const (
	Target  = "github.com/soakd/soakd/testdata/target"  // the leaky demo target
	Recycle = "github.com/soakd/soakd/testdata/recycle" // prefork and supervised servers
	CPUZoo  = "github.com/soakd/soakd/testdata/cpuzoo"  // the CPU verdict's servers
	Soakd   = "github.com/soakd/soakd/cmd/soakd"
)

// WaitFor polls cond until it holds, and fails the test when it does not
// within timeout; what names the condition in the failure.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// builds holds what Binary built in this test binary.
var builds struct {
	sync.Mutex
	dir  string
	bins map[string]string
	errs map[string]error
}

// Dir is the directory this test binary builds its programs into, made
// on first use and removed by Main.
func Dir(t testing.TB) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	dir, err := buildDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tempRoot is $TMPDIR as the test binary started: a test that sets TMPDIR
// for itself (t.Setenv) must not decide where the shared builds go, or
// they vanish with its folder and land in what it checks is left behind.
var tempRoot = os.TempDir()

func buildDir() (string, error) {
	if builds.dir == "" {
		dir, err := os.MkdirTemp(tempRoot, "soakd-test-bin-")
		if err != nil {
			return "", err
		}
		builds.dir = dir
	}
	return builds.dir, nil
}

// Binary builds the Go main package pkg once per test binary, whichever
// test asks first, and returns the program's path.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	if bin, ok := builds.bins[pkg]; ok {
		return bin
	}
	if err := builds.errs[pkg]; err != nil {
		t.Fatal(err)
	}
	dir, err := buildDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		if builds.errs == nil {
			builds.errs = map[string]error{}
		}
		builds.errs[pkg] = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		t.Fatal(builds.errs[pkg])
	}
	if builds.bins == nil {
		builds.bins = map[string]string{}
	}
	builds.bins[pkg] = bin
	return bin
}

// Parallel sets how many parallel tests the test binary runs at once
// (its -test.parallel) to n, unless the command line set it. A package
// whose parallel tests mostly wait (on a load at a fixed rate, on
// servers they started) calls it from TestMain before Main: the default,
// GOMAXPROCS, leaves a small machine's cores idle while they wait.
// Tests that measure CPU or contention must not be among the parallel
// ones: the package's sequential tests all run before its parallel ones.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(fmt.Sprintf("soaktest.Parallel(%d): %v", n, err))
		}
	}
}

// Main runs the tests and then removes the programs Binary built; a
// package's TestMain calls os.Exit(soaktest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	return code
}

// Server is a test server started by StartServer.
type Server struct {
	URL  string // http://HOST:PORT/
	Addr string // HOST:PORT
	PID  int
	Cmd  *exec.Cmd
	// Done is closed once the process has exited and been reaped.
	Done <-chan struct{}
	// Stderr is what the process wrote to its stderr so far.
	Stderr *LockedBuilder
}

// StartServer starts program with args and --port-file FILE, in a process
// group of its own, and waits until it has written "HOST:PORT\n" to FILE.
// The program must listen on loopback, from port 0. When the test ends
// the process gets SIGTERM, then SIGKILL after 10 s, by its PID, and is
// reaped; what is left of its group (workers it started) gets SIGKILL.
func StartServer(t testing.TB, program string, args ...string) *Server {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	var cmd *exec.Cmd
	stderr := &LockedBuilder{}
	for try := 0; ; try++ {
		cmd = exec.Command(program, append(args, "--port-file", portFile)...)
		cmd.Stderr = stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers, if any, share its group
		err := cmd.Start()
		if err == nil {
			break
		}
		// A program just written (OwnCopy) is busy while a process
		// forked meanwhile still holds the writer's descriptor, until it
		// execs: wait that out.
		if !errors.Is(err, syscall.ETXTBSY) || try == 100 {
			t.Fatalf("starting %s: %v", program, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	// Cleanups run last first: this one runs after Reap's has stopped
	// the server.
	t.Cleanup(func() {
		if err := syscall.Kill(-pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			syscall.Kill(-pid, syscall.SIGKILL) // what is left of the group it started
		}
	})
	exited := Reap(t, cmd)
	// Only a guard against a hang: a JVM compiling its source at start
	// took over 30 s on a machine busy with other work.
	const startLimit = 2 * time.Minute
	deadline := time.After(startLimit)
	for {
		if b, err := os.ReadFile(portFile); err == nil && strings.HasSuffix(string(b), "\n") {
			addr := strings.TrimSpace(string(b))
			return &Server{URL: "http://" + addr + "/", Addr: addr, PID: pid, Cmd: cmd, Done: exited, Stderr: stderr}
		}
		select {
		case <-exited:
			t.Fatalf("%s exited before writing its port file: %v\n%s", program, cmd.ProcessState, stderr.String())
		case <-deadline:
			t.Fatalf("%s did not write its port file within %s\n%s", program, startLimit, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// OwnCopy copies program into the test's temporary folder, so that the
// server the test starts from it shares no file pages with the servers
// other tests start from the same binary. A process's PSS counts its
// share of every page mapped by others too: when another instance of the
// same binary exits, the pages of its text move to the survivors, and a
// clean Go target's PSS rose from 2.5 to 6.5 MB when three siblings
// exited, as parallel tests do.
func OwnCopy(t testing.TB, program string) string {
	t.Helper()
	b, err := os.ReadFile(program)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(program))
	// Written back before it runs, as an installed program is: a file's
	// pages stay dirty in the page cache until they are, some 30 s, and
	// the program's text would count in its Private_Dirty meanwhile.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Reap waits for the started cmd in the background and returns a channel
// closed once it has exited and been reaped. When the test ends, cmd gets
// SIGTERM by its PID, then SIGKILL after 10 s, and is waited for.
func Reap(t testing.TB, cmd *exec.Cmd) <-chan struct{} {
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	return exited
}

// LockedBuilder is a strings.Builder that a process's output copier and
// the test may use at once (exec copies a non-file Stdout or Stderr from
// a goroutine of its own, which runs until the process's output closes).
type LockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
